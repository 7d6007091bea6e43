#include "core/works/work.hpp"

#include <array>
#include <string>

namespace sreh::works {

namespace {

template <class E, std::size_t N>
std::optional<E> parse_by_name(std::string_view s, const std::array<E, N>& all) {
  for (auto e : all)
    if (s == to_string(e))
      return e;
  return std::nullopt;
}

constexpr std::array all_states{work_state::open,       work_state::acknowledged,
                                work_state::mitigating, work_state::monitoring,
                                work_state::resolved,   work_state::cancelled};
constexpr std::array all_inputs{work_input::acknowledge,   work_input::start_run,
                                work_input::criteria_hold, work_input::criteria_lapse,
                                work_input::criteria_met,  work_input::resolve,
                                work_input::cancel,        work_input::reopen};
constexpr std::array all_policies{double_texting::enqueue, double_texting::join,
                                  double_texting::interrupt, double_texting::reject};

std::optional<work_state> next(work_state s, work_input in) {
  using S = work_state;
  using I = work_input;
  if (is_closed(s))
    return in == I::reopen ? std::optional{S::open} : std::nullopt;
  switch (in) {
  case I::acknowledge:
    return s == S::open ? S::acknowledged : s;
  case I::start_run:
    return s == S::open || s == S::acknowledged ? std::optional{S::mitigating}
           : s == S::mitigating                 ? std::optional{s} // another run of it
                                                : std::nullopt;
  case I::criteria_hold:
    return s == S::mitigating ? std::optional{S::monitoring} : std::nullopt;
  case I::criteria_lapse:
    return s == S::monitoring ? std::optional{S::mitigating} : std::nullopt;
  case I::criteria_met:
    return s == S::monitoring ? std::optional{S::resolved} : std::nullopt;
  case I::resolve:
    return S::resolved;
  case I::cancel:
    return S::cancelled;
  case I::reopen:
    return std::nullopt;
  }
  return std::nullopt;
}

} // namespace

const char* to_string(work_state s) {
  switch (s) {
  case work_state::open:
    return "open";
  case work_state::acknowledged:
    return "acknowledged";
  case work_state::mitigating:
    return "mitigating";
  case work_state::monitoring:
    return "monitoring";
  case work_state::resolved:
    return "resolved";
  case work_state::cancelled:
    return "cancelled";
  }
  return "unknown";
}

const char* to_string(work_input i) {
  switch (i) {
  case work_input::acknowledge:
    return "acknowledge";
  case work_input::start_run:
    return "start_run";
  case work_input::criteria_hold:
    return "criteria_hold";
  case work_input::criteria_lapse:
    return "criteria_lapse";
  case work_input::criteria_met:
    return "criteria_met";
  case work_input::resolve:
    return "resolve";
  case work_input::cancel:
    return "cancel";
  case work_input::reopen:
    return "reopen";
  }
  return "unknown";
}

std::optional<work_state> parse_work_state(std::string_view s) {
  return parse_by_name(s, all_states);
}

std::optional<work_input> parse_work_input(std::string_view s) {
  return parse_by_name(s, all_inputs);
}

bool is_closed(work_state s) {
  return s == work_state::resolved || s == work_state::cancelled;
}

expected<work_state> transition(work_state from, work_input in) {
  if (auto to = next(from, in))
    return *to;
  return sreh::error{errc::conflict,
                     std::string{"cannot "} + to_string(in) + " a work that is " + to_string(from)};
}

const char* to_string(double_texting p) {
  switch (p) {
  case double_texting::enqueue:
    return "enqueue";
  case double_texting::join:
    return "join";
  case double_texting::interrupt:
    return "interrupt";
  case double_texting::reject:
    return "reject";
  }
  return "unknown";
}

std::optional<double_texting> parse_double_texting(std::string_view s) {
  return parse_by_name(s, all_policies);
}

const char* to_string(trigger_action a) {
  switch (a) {
  case trigger_action::start:
    return "start";
  case trigger_action::queue:
    return "queue";
  case trigger_action::attach:
    return "attach";
  case trigger_action::replace:
    return "replace";
  case trigger_action::refuse:
    return "refuse";
  }
  return "unknown";
}

trigger_action on_trigger(double_texting policy, bool run_active, work_state state) {
  if (is_closed(state))
    return trigger_action::refuse;
  if (!run_active)
    return trigger_action::start;
  switch (policy) {
  case double_texting::enqueue:
    return trigger_action::queue;
  case double_texting::join:
    return trigger_action::attach;
  case double_texting::interrupt:
    return trigger_action::replace;
  case double_texting::reject:
    return trigger_action::refuse;
  }
  return trigger_action::refuse;
}

const char* to_string(sla_clock c) {
  switch (c) {
  case sla_clock::acknowledge:
    return "acknowledge";
  case sla_clock::mitigate:
    return "mitigate";
  case sla_clock::resolve:
    return "resolve";
  }
  return "unknown";
}

std::vector<sla_status> sla_clocks(const sla_policy& p, const sla_marks& m, timestamp_us now) {
  std::vector<sla_status> out;
  auto add = [&](sla_clock c, std::int64_t ms, timestamp_us stopped) {
    if (ms <= 0)
      return;
    sla_status s{c, m.created_at + ms * 1000, stopped, false};
    s.breached = stopped ? stopped > s.due_at : now >= s.due_at;
    out.push_back(s);
  };
  // Resolving stops every clock: a Work resolved without an acknowledgement met its SLA then.
  auto stop = [&](timestamp_us t) { return t ? t : m.resolved_at; };
  add(sla_clock::acknowledge, p.acknowledge_ms, stop(m.acknowledged_at));
  add(sla_clock::mitigate, p.mitigate_ms, stop(m.mitigated_at));
  add(sla_clock::resolve, p.resolve_ms, m.resolved_at);
  return out;
}

std::optional<timestamp_us> next_sla_deadline(const sla_policy& p, const sla_marks& m,
                                              timestamp_us now) {
  std::optional<timestamp_us> best;
  for (const auto& s : sla_clocks(p, m, now))
    if (!s.stopped_at && s.due_at > now && (!best || s.due_at < *best))
      best = s.due_at;
  return best;
}

} // namespace sreh::works
