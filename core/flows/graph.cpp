#include "core/flows/graph.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>

namespace sreh::flows {

namespace {

/// 90000 → "90s", 300000 → "5m", 7200000 → "2h".
std::string short_duration(std::int64_t ms) {
  if (ms % 3'600'000 == 0)
    return fmt::format("{}h", ms / 3'600'000);
  if (ms % 60'000 == 0)
    return fmt::format("{}m", ms / 60'000);
  if (ms % 1'000 == 0)
    return fmt::format("{}s", ms / 1'000);
  return fmt::format("{}ms", ms);
}

struct builder {
  graph& g;

  void edge(const std::string& from, const std::string& to, std::string label) {
    g.edges.push_back({from, to, std::move(label)});
  }

  /// An edge to `target` of a list whose end goes on at `after` (with label `join`).
  void link(const std::string& from, const std::string& target, const std::string& label,
            const std::string& after, const std::string& join) {
    if (!target.empty() && target != end_target)
      return edge(from, target, label);
    if (!after.empty())
      edge(from, after, label.empty() ? join : label);
  }

  void add_list(const std::vector<step>& list, const std::string& parallel,
                const std::string& branch, const std::string& after, const std::string& join) {
    for (std::size_t i = 0; i < list.size(); ++i) {
      const auto& s = list[i];
      g.nodes.push_back({s.id, s.kind(), describe(s), parallel, branch});
      std::string succ = !s.next.empty() ? s.next : i + 1 < list.size() ? list[i + 1].id : "";
      if (const auto* c = std::get_if<condition_step>(&s.body)) {
        for (const auto& k : c->cases)
          link(s.id, k.then, c->cases.size() == 1 ? "then" : "when " + k.when, after, join);
        link(s.id, c->otherwise.empty() ? succ : c->otherwise, "else", after, join);
      } else if (const auto* p = std::get_if<parallel_step>(&s.body)) {
        std::string go_on = succ.empty() || succ == end_target ? after : succ;
        auto joined = fmt::format("join {}", to_string(p->join));
        for (const auto& b : p->branches) {
          if (!b.steps.empty())
            edge(s.id, b.steps.front().id, "branch " + b.name);
          add_list(b.steps, s.id, b.name, go_on, joined);
        }
      } else {
        link(s.id, succ, "", after, join);
      }
      if (s.failure.action == failure_action::go_to)
        link(s.id, s.failure.target, "on failure", after, join);
    }
  }
};

} // namespace

std::string describe(const step& s) {
  switch (s.kind()) {
  case step_kind::tool:
    return std::get<tool_call>(s.body).tool;
  case step_kind::goal: {
    const auto& goal = std::get<goal_step>(s.body).goal;
    return "goal: " + (goal.size() > 48 ? goal.substr(0, 45) + "..." : goal);
  }
  case step_kind::approval: {
    const auto& a = std::get<approval_step>(s.body);
    return fmt::format("approval: {} of {}", a.approvers,
                       a.roles.empty() ? std::string{"anyone"}
                                       : fmt::format("{}", fmt::join(a.roles, "|")));
  }
  case step_kind::condition: {
    const auto& c = std::get<condition_step>(s.body);
    return c.cases.size() == 1 ? "if " + c.cases.front().when
                               : fmt::format("{} cases", c.cases.size());
  }
  case step_kind::parallel: {
    const auto& p = std::get<parallel_step>(s.body);
    return fmt::format("parallel: {} branches, join {}", p.branches.size(), to_string(p.join));
  }
  case step_kind::wait: {
    const auto& w = std::get<wait_step>(s.body);
    if (w.until.empty())
      return "wait " + short_duration(w.duration_ms);
    return fmt::format("wait until {} (deadline {})", w.until, short_duration(w.deadline_ms));
  }
  case step_kind::flow:
    return "flow " + std::get<flow_call>(s.body).flow;
  }
  return "?";
}

graph make_graph(const flow& f) {
  graph g;
  builder{g}.add_list(f.steps, "", "", "", "");
  // Targets that name no step (the loader reports them) add no edge.
  std::erase_if(g.edges, [&](const graph_edge& e) { return g.node(e.to) == nullptr; });
  return g;
}

const graph_node* graph::node(std::string_view id) const {
  for (const auto& n : nodes)
    if (n.id == id)
      return &n;
  return nullptr;
}

std::vector<const graph_edge*> graph::out(std::string_view id) const {
  std::vector<const graph_edge*> r;
  for (const auto& e : edges)
    if (e.from == id)
      r.push_back(&e);
  return r;
}

std::vector<std::string> graph::cycle() const {
  enum color { white, grey, black };
  std::map<std::string, color, std::less<>> seen;
  std::vector<std::string> path;
  std::vector<std::string> found;
  std::function<bool(const std::string&)> visit = [&](const std::string& id) {
    seen[id] = grey;
    path.push_back(id);
    for (const auto* e : out(id)) {
      auto c = seen[e->to];
      if (c == grey) {
        auto at = std::find(path.begin(), path.end(), e->to);
        found.assign(at, path.end());
        found.push_back(e->to);
        return true;
      }
      if (c == white && visit(e->to))
        return true;
    }
    seen[id] = black;
    path.pop_back();
    return false;
  };
  for (const auto& n : nodes)
    if (seen[n.id] == white && visit(n.id))
      return found;
  return {};
}

bool graph::reaches(std::string_view from, std::string_view to) const {
  std::vector<std::string> todo{std::string{from}};
  std::map<std::string, bool, std::less<>> seen;
  while (!todo.empty()) {
    auto id = todo.back();
    todo.pop_back();
    for (const auto* e : out(id)) {
      if (e->to == to)
        return true;
      if (!seen[e->to]) {
        seen[e->to] = true;
        todo.push_back(e->to);
      }
    }
  }
  return false;
}

} // namespace sreh::flows
