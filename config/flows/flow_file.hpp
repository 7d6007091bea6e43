#pragma once
// Flow files (YAML; docs/flows.md): loaded and validated with FILE:LINE:COL errors.

#include <string>
#include <vector>

#include "core/base/expected.hpp"
#include "core/flows/flow.hpp"

namespace sreh::config {

struct flow_options {
  /// The tools a step (or a compensation) may call; null: not checked here (a node loads its
  /// flows before its tools exist and checks them with `check_flow_tools` once they do).
  const std::vector<std::string>* tools = nullptr;
};

/// Loads one flow file. Errors read `FILE:LINE:COLUMN: path: what`: unknown keys (with a hint),
/// wrong types, a step with no kind or two, a duplicate step id, a jump (then, else, next,
/// goto) to no step or out of its own list, a cycle (with its path), a step never reached, an
/// unknown tool, a
/// placeholder or path naming no input, or a step that does not come before, an expression that
/// does not parse or compares values of two kinds, a default of the wrong type.
[[nodiscard]] expected<flows::flow> load_flow_file(const std::string& path,
                                                   const flow_options& o = {});
/// Same, from text (`name` stands for the file in messages).
[[nodiscard]] expected<flows::flow>
load_flow_string(const std::string& text, const std::string& name, const flow_options& o = {});

/// Every `*.yaml` / `*.yml` of `dir` (not recursive), in name order. Across the files: two flows
/// of one name, a `flow` step naming no flow of the folder (or giving it inputs it does not have,
/// or leaving out a required one), and flows that call each other in a circle are errors.
[[nodiscard]] expected<std::vector<flows::flow>> load_flow_dir(const std::string& dir,
                                                               const flow_options& o = {});

/// The first tool a step of `flows` calls that is not in `tools`, as
/// `FILE:LINE:COLUMN: path: unknown tool 'x' (did you mean 'y'?)`; no error when all are.
[[nodiscard]] sreh::error check_flow_tools(const std::vector<flows::flow>& flows,
                                           const std::vector<std::string>& tools);

/// Whether `text` is a flow file (a top-level `flow:` key), for `sreh config check`.
[[nodiscard]] bool looks_like_flow(const std::string& text);

} // namespace sreh::config
