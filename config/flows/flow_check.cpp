// The checks of a flow file that need every step read first: jumps, cycles, what placeholders
// and expression paths name, and the expressions' types.
#include <fmt/format.h>

#include <algorithm>

#include "config/flows/flow_read.hpp"
#include "core/expr/expression.hpp"
#include "core/flows/graph.hpp"
#include "core/flows/reference.hpp"

namespace sreh::config::flow_detail {

namespace {

using namespace sreh::flows;

std::vector<std::string_view> step_ids(const load_state& s) {
  std::vector<std::string_view> out;
  for (const auto& [id, _] : s.ids)
    out.push_back(id);
  return out;
}

void check_targets(load_state& s) {
  for (const auto& t : s.targets) {
    if (t.target == end_target)
      continue;
    auto to = s.f.locate(t.target);
    if (!to)
      s.r.fail(t.e, yaml::unknown("step", t.target, step_ids(s)));
    auto from = s.f.locate(t.step);
    if (to->parallel != from->parallel || to->branch != from->branch)
      s.r.fail(t.e, fmt::format("step '{}' is in another list of steps: a jump stays in the list "
                                "it is written in (the flow's steps, or one branch)",
                                t.target));
  }
}

void check_acyclic(load_state& s, const graph& g) {
  auto cycle = g.cycle();
  if (cycle.empty())
    return;
  const auto& back = s.ids.at(cycle[cycle.size() - 2]); // the step whose jump closes it
  s.r.fail(back, fmt::format("the steps form a cycle: {} (a flow is acyclic: retries repeat a "
                             "step)",
                             fmt::join(cycle, " → ")));
}

/// Every step but the first of its list is where some step goes on to; one that none does is
/// dead (a typo in a jump, or a `next: end` before it).
void check_reached(load_state& s, const graph& g) {
  for (const auto* st : s.f.all_steps()) {
    auto where = s.f.locate(st->id);
    if (where->index == 0)
      continue;
    bool reached = std::any_of(g.edges.begin(), g.edges.end(),
                               [&](const graph_edge& e) { return e.to == st->id; });
    if (!reached)
      s.r.fail(s.ids.at(st->id),
               fmt::format("step '{}' is never reached: no step goes on to it (a jump or a "
                           "'next: end' before it passes it by)",
                           st->id));
  }
}

/// What is wrong with `ref` in a text of step `step`, or "".
std::string misnamed(const load_state& s, const graph& g, const reference& ref,
                     const pending_text& t) {
  if (ref.kind == reference::input) {
    if (s.f.input(ref.name) != nullptr)
      return {};
    std::vector<std::string_view> names;
    for (const auto& i : s.f.inputs)
      names.push_back(i.name);
    return yaml::unknown("input", ref.name, names);
  }
  if (ref.kind == reference::world)
    return {};
  if (ref.name == t.step && t.compensation && ref.kind == reference::step_output)
    return {}; // a compensation undoes its own step's effect
  if (s.f.find(ref.name) == nullptr)
    return yaml::unknown("step", ref.name, step_ids(s));
  if (!g.reaches(ref.name, t.step))
    return fmt::format("step '{}' does not come before step '{}' (no path of the flow leads from "
                       "it to here)",
                       ref.name, t.step);
  return {};
}

/// A placeholder's stand-in while an expression is checked: of the input's type, else a name.
std::string stand_in(const load_state& s, const reference& ref) {
  if (ref.kind == reference::input)
    if (const auto* i = s.f.input(ref.name)) {
      if (i->type == input_type::number || i->type == input_type::duration)
        return "0";
      if (i->type == input_type::boolean)
        return "true";
    }
  return "x";
}

expected<std::optional<expr::value_kind>>
type_of(const load_state& s, const graph& g, const pending_text& t, const expr::comparison& c) {
  auto ref = parse_reference(c.path);
  if (!ref)
    return ref.error();
  if (auto what = misnamed(s, g, *ref, t); !what.empty())
    return sreh::error{errc::invalid_argument, what};
  switch (ref->kind) {
  case reference::input:
    switch (s.f.input(ref->name)->type) {
    case input_type::string:
      return std::optional{expr::value_kind::string};
    case input_type::boolean:
      return std::optional{expr::value_kind::boolean};
    case input_type::list:
      return sreh::error{errc::invalid_argument,
                         fmt::format("'{}' is a list, which cannot be compared", c.path)};
    default:
      return std::optional{expr::value_kind::number}; // number, duration (seconds)
    }
  case reference::step_output:
    return std::optional<expr::value_kind>{}; // known when the step has run
  case reference::step_status:
    return std::optional{expr::value_kind::string};
  case reference::world:
    break;
  }
  return std::optional{expr::value_kind::number};
}

void check_text(load_state& s, const graph& g, const pending_text& t) {
  auto fail = [&](const std::string& what) {
    s.r.fail(t.e, fmt::format("in '{}': {}", t.text, what));
  };
  auto found = placeholders(t.text);
  if (!found)
    fail(found.error().message);
  for (const auto& p : *found) {
    auto ref = parse_reference(p.path);
    if (!ref)
      fail(fmt::format("position {}: {}", p.pos + 1, ref.error().message));
    if (auto what = misnamed(s, g, *ref, t); !what.empty())
      fail(fmt::format("position {}: {}", p.pos + 1, what));
  }
  if (!t.expression)
    return;
  auto probe =
    render(t.text, [&](const reference& r) -> expected<std::string> { return stand_in(s, r); });
  auto parsed = expr::parse(*probe, expr::literals::any);
  if (!parsed)
    fail(parsed.error().message);
  if (auto err =
        parsed->check_types([&](const expr::comparison& c) { return type_of(s, g, t, c); }))
    fail(err.message);
}

} // namespace

void check_flow(load_state& s) {
  check_targets(s);
  auto g = make_graph(s.f);
  check_acyclic(s, g);
  check_reached(s, g);
  for (const auto& t : s.texts)
    check_text(s, g, t);
}

} // namespace sreh::config::flow_detail
