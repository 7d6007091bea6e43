#include "core/flows/flow.hpp"

#include <algorithm>
#include <cmath>

namespace sreh::flows {

const char* to_string(input_type t) {
  switch (t) {
  case input_type::string:
    return "string";
  case input_type::number:
    return "number";
  case input_type::boolean:
    return "bool";
  case input_type::duration:
    return "duration";
  case input_type::list:
    return "list";
  }
  return "?";
}

std::optional<input_type> parse_input_type(std::string_view s) {
  for (auto t : {input_type::string, input_type::number, input_type::boolean, input_type::duration,
                 input_type::list})
    if (s == to_string(t))
      return t;
  return std::nullopt;
}

const char* to_string(join_mode j) {
  return j == join_mode::all ? "all" : "any";
}

const char* to_string(step_kind k) {
  switch (k) {
  case step_kind::tool:
    return "tool";
  case step_kind::goal:
    return "goal";
  case step_kind::approval:
    return "approval";
  case step_kind::condition:
    return "condition";
  case step_kind::parallel:
    return "parallel";
  case step_kind::wait:
    return "wait";
  case step_kind::flow:
    return "flow";
  }
  return "?";
}

const char* to_string(failure_action a) {
  switch (a) {
  case failure_action::fail:
    return "fail";
  case failure_action::continue_on:
    return "continue";
  case failure_action::go_to:
    return "goto";
  case failure_action::compensate:
    return "compensate";
  }
  return "?";
}

std::string on_failure::text() const {
  return action == failure_action::go_to ? "goto:" + target : to_string(action);
}

std::int64_t retry_policy::delay_ms(int n) const {
  double d = static_cast<double>(initial_ms) * std::pow(multiplier, std::max(0, n - 1));
  return d >= static_cast<double>(max_ms) ? max_ms : static_cast<std::int64_t>(d);
}

bool step::acts() const {
  auto k = kind();
  return k == step_kind::tool || k == step_kind::goal || k == step_kind::flow;
}

const input_spec* flow::input(std::string_view name) const {
  for (const auto& i : inputs)
    if (i.name == name)
      return &i;
  return nullptr;
}

namespace {

void collect(const std::vector<step>& list, std::vector<const step*>& out) {
  for (const auto& s : list) {
    out.push_back(&s);
    if (const auto* p = std::get_if<parallel_step>(&s.body))
      for (const auto& b : p->branches)
        collect(b.steps, out);
  }
}

/// Finds `id` in `list` or its branches; `where` is the list's own location.
std::optional<step_location> locate_in(const std::vector<step>& list, std::string_view id,
                                       const step_location& where) {
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (list[i].id == id)
      return step_location{where.parallel, where.branch, i};
    if (const auto* p = std::get_if<parallel_step>(&list[i].body))
      for (const auto& b : p->branches)
        if (auto found = locate_in(b.steps, id, {list[i].id, b.name, 0}))
          return found;
  }
  return std::nullopt;
}

} // namespace

std::vector<const step*> flow::all_steps() const {
  std::vector<const step*> out;
  collect(steps, out);
  return out;
}

const step* flow::find(std::string_view id) const {
  for (const auto* s : all_steps())
    if (s->id == id)
      return s;
  return nullptr;
}

std::optional<step_location> flow::locate(std::string_view id) const {
  return locate_in(steps, id, {});
}

const std::vector<step>* flow::list_of(const step_location& where) const {
  if (where.parallel.empty())
    return &steps;
  const auto* p = find(where.parallel);
  if (p == nullptr || p->kind() != step_kind::parallel)
    return nullptr;
  for (const auto& b : std::get<parallel_step>(p->body).branches)
    if (b.name == where.branch)
      return &b.steps;
  return nullptr;
}

std::string flow::following(std::string_view id) const {
  auto where = locate(id);
  if (!where)
    return {};
  const auto& list = *list_of(*where);
  const auto& s = list[where->index];
  if (!s.next.empty())
    return s.next == end_target ? std::string{} : s.next;
  return where->index + 1 < list.size() ? list[where->index + 1].id : std::string{};
}

} // namespace sreh::flows
