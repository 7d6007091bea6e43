#pragma once
// A flow's steps as a directed graph: what the loader checks (cycles, what comes before what),
// what GET /v1/flows/{name} returns and what `sreh flow graph` draws. Pure.

#include <string>
#include <string_view>
#include <vector>

#include "core/flows/flow.hpp"

namespace sreh::flows {

struct graph_node {
  std::string id;
  step_kind kind = step_kind::tool;
  std::string label; // what the step does: "deploy.rollback", "wait 5m", "approval 1 of approver"
  std::string parallel; // the parallel step whose branch holds it; "" at the top
  std::string branch;
};

/// From one step to another. Labels: "" (goes on), "then", "else", "when EXPR", "on failure",
/// "branch NAME" (a parallel step to a branch's first step), "join all" / "join any" (a branch's
/// last step to the step after the parallel one).
struct graph_edge {
  std::string from;
  std::string to;
  std::string label;
};

struct graph {
  std::vector<graph_node> nodes; // every step, parents before their branches, in file order
  std::vector<graph_edge> edges;

  [[nodiscard]] const graph_node* node(std::string_view id) const;
  /// The edges leaving `id`, in the order written.
  [[nodiscard]] std::vector<const graph_edge*> out(std::string_view id) const;
  /// A cycle as the ids along it, the first repeated at the end ("a", "b", "a"); empty when the
  /// graph is acyclic.
  [[nodiscard]] std::vector<std::string> cycle() const;
  /// Whether a path leads from `from` to `to` (not counting the empty path).
  [[nodiscard]] bool reaches(std::string_view from, std::string_view to) const;
};

/// The graph of `f`'s steps. Jump targets naming no step (and `end`) add no edge.
[[nodiscard]] graph make_graph(const flow& f);

/// What a step does in a few words (the node's label).
[[nodiscard]] std::string describe(const step& s);

} // namespace sreh::flows
