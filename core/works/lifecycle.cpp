#include "core/works/lifecycle.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>

#include "core/base/json.hpp"
#include "core/base/json_object.hpp"

namespace sreh::works {

namespace {

constexpr std::array all_commands{work_command::ack,     work_command::resolve,
                                  work_command::reopen,  work_command::cancel,
                                  work_command::comment, work_command::trigger};

timeline_entry transition_entry(work_input in, work_state from, work_state to, std::string_view by,
                                std::string_view text) {
  return {"work.transition", json::object("input", to_string(in), "from", to_string(from), "to",
                                          to_string(to), "by", by, "text", text)};
}

/// Moves `w` by `in`, stamping the SLA marks the new state stops; the entry recording it.
expected<timeline_entry> move(work& w, work_input in, std::string_view by, std::string_view text,
                              timestamp_us now) {
  auto to = transition(w.state, in);
  if (!to)
    return to.error();
  const auto from = w.state;
  w.state = *to;
  auto& m = w.marks;
  if (*to == work_state::acknowledged && m.acknowledged_at == 0)
    m.acknowledged_at = now;
  if ((*to == work_state::monitoring || *to == work_state::resolved) && m.mitigated_at == 0)
    m.mitigated_at = now;
  if (*to == work_state::resolved || *to == work_state::cancelled) {
    if (m.resolved_at == 0)
      m.resolved_at = now;
    w.queued = 0;
  }
  if (in == work_input::acknowledge && m.acknowledged_at == 0)
    m.acknowledged_at = now; // acknowledged while already mitigating: the clock stops too
  if (in == work_input::reopen) {
    m.resolved_at = 0;
    w.holds_since = 0;
  }
  if (*to != work_state::monitoring && *to != work_state::resolved)
    w.holds_since = 0;
  w.updated_at = now;
  return transition_entry(in, from, *to, by, text);
}

/// Queues a run and says to start it when none is active.
void queue_run(work& w, effects& fx) {
  w.queued += 1;
  fx.start_run = w.active_run.empty();
}

} // namespace

const char* to_string(work_command c) {
  switch (c) {
  case work_command::ack:
    return "ack";
  case work_command::resolve:
    return "resolve";
  case work_command::reopen:
    return "reopen";
  case work_command::cancel:
    return "cancel";
  case work_command::comment:
    return "comment";
  case work_command::trigger:
    return "trigger";
  case work_command::alerts:
    return "alerts";
  }
  return "unknown";
}

std::optional<work_command> parse_work_command(std::string_view s) {
  for (auto c : all_commands)
    if (s == to_string(c))
      return c;
  return std::nullopt;
}

expected<effects> apply_command(work& w, const work_template& t, work_command c,
                                std::string_view by, std::string_view text, timestamp_us now) {
  effects fx;
  switch (c) {
  case work_command::comment: {
    if (text.empty())
      return sreh::error{errc::invalid_argument, "text: a comment needs text"};
    fx.entries.push_back({"work.comment", json::object("by", by, "text", text)});
    w.updated_at = now;
    return fx;
  }
  case work_command::trigger: {
    const bool active = !w.active_run.empty();
    const auto action = on_trigger(t.on_trigger, active, w.state);
    if (action == trigger_action::refuse) {
      if (is_closed(w.state))
        return sreh::error{errc::conflict, fmt::format("work {} is {}: reopen it before a new "
                                                       "trigger",
                                                       w.id, to_string(w.state))};
      return sreh::error{errc::conflict,
                         fmt::format("work {} has an active run ({}) and its template's "
                                     "double_texting is reject",
                                     w.id, w.active_run)};
    }
    if (!t.runs())
      return sreh::error{errc::conflict,
                         fmt::format("template '{}' has no goal or flow to run", t.name)};
    switch (action) {
    case trigger_action::start:
    case trigger_action::queue:
      queue_run(w, fx);
      break;
    case trigger_action::replace:
      w.queued = 1; // one fresh run replaces the active one and anything queued
      fx.cancel_run = true;
      break;
    case trigger_action::attach:
    case trigger_action::refuse:
      break;
    }
    fx.entries.push_back(
      {"work.triggered",
       json::object("by", by, "text", text, "action", to_string(action), "policy",
                    to_string(t.on_trigger), "active_run", json::string_or_null(w.active_run))});
    w.updated_at = now;
    return fx;
  }
  case work_command::alerts:
    return merge_alerts(w, by, text, now);
  case work_command::ack:
  case work_command::resolve:
  case work_command::reopen:
  case work_command::cancel:
    break;
  }
  const auto in = c == work_command::ack       ? work_input::acknowledge
                  : c == work_command::resolve ? work_input::resolve
                  : c == work_command::reopen  ? work_input::reopen
                                               : work_input::cancel;
  auto entry = move(w, in, by, text, now);
  if (!entry)
    return entry.error();
  fx.entries.push_back(std::move(*entry));
  fx.cancel_run = c == work_command::cancel && !w.active_run.empty();
  return fx;
}

expected<effects> merge_alerts(work& w, std::string_view by, std::string_view text,
                               timestamp_us now) {
  auto bad = [](std::string what) {
    return sreh::error{errc::invalid_argument, "alerts: " + what};
  };
  auto doc = json::parse_object(text);
  if (!doc)
    return bad(doc.error().message);
  auto in = doc->FindMember("alerts");
  if (in == doc->MemberEnd() || !in->value.IsObject())
    return bad("expected {\"alerts\": {FINGERPRINT: STATUS}}");
  std::int64_t truncated = 0;
  if (auto t = doc->FindMember("truncated"); t != doc->MemberEnd()) {
    if (!t->value.IsInt64() || t->value.GetInt64() < 0)
      return bad("truncated: expected a count");
    truncated = t->value.GetInt64();
  }
  std::map<std::string, std::string> known;
  if (auto cur = json::parse(w.alerts); cur && cur->IsObject())
    for (const auto& m : cur->GetObject())
      if (m.value.IsString())
        known[m.name.GetString()] = m.value.GetString();
  std::vector<std::string> firing, resolved;
  for (const auto& m : in->value.GetObject()) {
    if (!m.value.IsString())
      return bad("the status of each alert must be a string");
    std::string status{m.value.GetString(), m.value.GetStringLength()};
    if (status != "firing" && status != "resolved")
      return bad("status '" + status + "' is not firing or resolved");
    std::string fp{m.name.GetString(), m.name.GetStringLength()};
    auto& was = known[fp];
    if (was == status)
      continue;
    was = status;
    (status == "firing" ? firing : resolved).push_back(fp);
  }
  effects fx;
  if (firing.empty() && resolved.empty() && truncated == 0)
    return fx;
  w.alerts = json::build([&](json::writer& out) {
    out.StartObject();
    for (const auto& [fp, status] : known)
      json::field(out, fp, status);
    out.EndObject();
  });
  w.updated_at = now;
  std::size_t still = 0;
  for (const auto& [fp, status] : known)
    still += status == "firing" ? 1 : 0;
  fx.entries.push_back(
    {"work.alerts", json::object("by", by, "firing", firing, "resolved", resolved, "still_firing",
                                 still, "truncated", truncated)});
  return fx;
}

effects on_created(work& w, const work_template& t) {
  effects fx;
  fx.entries.push_back(
    {"work.created",
     json::object("template", w.template_name, "version", w.template_version, "kind", w.kind,
                  "title", w.title, "fields", json::raw_text{w.fields}, "by", w.creator)});
  if (t.runs())
    queue_run(w, fx);
  return fx;
}

effects on_run_started(work& w, const std::string& run_id, std::int64_t n, bool created,
                       timestamp_us now) {
  effects fx;
  if (std::find(w.runs.begin(), w.runs.end(), run_id) == w.runs.end())
    w.runs.push_back(run_id);
  w.active_run = run_id;
  w.triggers = std::max(w.triggers, n);
  w.queued = std::max<std::int64_t>(0, w.queued - 1);
  w.updated_at = now;
  fx.entries.push_back(
    {"work.run_started", json::object("run_id", run_id, "n", n, "created", created)});
  if (w.state == work_state::monitoring) // a new run: mitigation is going on again
    if (auto e = move(w, work_input::criteria_lapse, "orchestrator", "a new run started", now))
      fx.entries.push_back(std::move(*e));
  if (w.state == work_state::open || w.state == work_state::acknowledged)
    if (auto e = move(w, work_input::start_run, "orchestrator", run_id, now))
      fx.entries.push_back(std::move(*e));
  return fx;
}

effects on_run_ended(work& w, const std::string& run_id, std::string_view state, timestamp_us now,
                     std::string_view outcome) {
  effects fx;
  if (run_id.empty() || run_id != w.active_run)
    return fx;
  w.active_run.clear();
  w.updated_at = now;
  fx.entries.push_back({"work.run_ended", json::object("run_id", run_id, "state", state, "outcome",
                                                       json::string_or_null(outcome))});
  fx.start_run = w.queued > 0 && !is_closed(w.state);
  return fx;
}

effects on_run_refused(work& w, std::string_view why, timestamp_us now) {
  effects fx;
  w.queued = std::max<std::int64_t>(0, w.queued - 1);
  w.updated_at = now;
  fx.entries.push_back({"work.run_refused", json::object("error", why)});
  fx.start_run = w.queued > 0 && w.active_run.empty() && !is_closed(w.state);
  return fx;
}

effects on_criteria(work& w, const expected<bool>& holds, timestamp_us world_at, std::int64_t for_s,
                    std::string_view last_error, timestamp_us now) {
  effects fx;
  if (w.state != work_state::mitigating && w.state != work_state::monitoring)
    return fx;
  w.world_at = world_at;
  if (!holds) {
    if (holds.error().message != last_error)
      fx.entries.push_back(
        {"work.criteria", json::object("holds", nullptr, "error", holds.error().message)});
    return fx;
  }
  const auto window_us = for_s * 1'000'000;
  if (!*holds) {
    if (w.state == work_state::monitoring)
      if (auto e = move(w, work_input::criteria_lapse, "orchestrator",
                        "the done-criteria stopped holding", now))
        fx.entries.push_back(std::move(*e));
    return fx;
  }
  if (w.state == work_state::mitigating) {
    if (auto e = move(w, work_input::criteria_hold, "orchestrator", "the done-criteria hold", now))
      fx.entries.push_back(std::move(*e));
    w.holds_since = world_at;
  }
  if (w.state == work_state::monitoring && w.active_run.empty() &&
      world_at - w.holds_since >= window_us) {
    const auto held = w.holds_since;
    if (auto e = move(w, work_input::criteria_met, "orchestrator",
                      fmt::format("the done-criteria held for {} s of world time", for_s), now)) {
      fx.entries.push_back(std::move(*e));
      w.holds_since = held;
    }
  }
  return fx;
}

effects on_sla(work& w, const sla_policy& p, timestamp_us now) {
  effects fx;
  for (const auto& s : sla_clocks(p, w.marks, now)) {
    const auto bit = std::int64_t{1} << static_cast<int>(s.clock);
    if (!s.breached || s.stopped_at != 0 || (w.sla_breached & bit) != 0)
      continue;
    w.sla_breached |= bit;
    w.updated_at = now;
    fx.entries.push_back(
      {"work.sla_breached", json::object("clock", to_string(s.clock), "due_at", s.due_at,
                                         "overdue_us", now - s.due_at)});
  }
  return fx;
}

timestamp_us next_check(const work& w, const work_template& t, std::int64_t check_every_us,
                        timestamp_us now) {
  if (is_closed(w.state))
    return 0;
  timestamp_us next = 0;
  auto consider = [&next](timestamp_us at) {
    if (at > 0 && (next == 0 || at < next))
      next = at;
  };
  for (const auto& s : sla_clocks(t.sla, w.marks, now)) {
    const auto bit = std::int64_t{1} << static_cast<int>(s.clock);
    if (s.stopped_at == 0 && (w.sla_breached & bit) == 0)
      consider(std::max(s.due_at, now));
  }
  if (t.done && (w.state == work_state::mitigating || w.state == work_state::monitoring))
    consider(now + check_every_us);
  return next;
}

std::string run_key(const work& w, std::int64_t n) {
  return fmt::format("{}/run-{}", w.id, n);
}

} // namespace sreh::works
