#pragma once
// Private to config/flows: the state of one flow file's load, shared by the step reader
// (flow_steps.cpp) and the checks that need every step read first (flow_check.cpp).

#include <map>
#include <string>
#include <vector>

#include "config/flows/flow_file.hpp"
#include "config/yaml/reader.hpp"
#include "core/flows/flow.hpp"

namespace sreh::config::flow_detail {

/// A text read from the file that may hold placeholders, checked once every step is known.
struct pending_text {
  yaml::entry e;
  std::string text;
  std::string step; // the step it belongs to
  bool expression = false;
  bool compensation = false; // in the step's `compensate`: it may name the step's own output
};

/// A jump (then, else, case, next, goto) to check once every step is known.
struct pending_target {
  yaml::entry e;
  std::string step;
  std::string target;
};

struct load_state {
  yaml::reader& r;
  flows::flow& f;
  const flow_options& o;
  std::map<std::string, yaml::entry> ids; // every step id → its `id` entry
  std::vector<pending_text> texts;
  std::vector<pending_target> targets;
};

/// The 1-based position and path of an entry.
[[nodiscard]] flows::source_pos pos_of(const yaml::entry& e);

/// A sequence of steps (the flow's `steps`, a branch).
[[nodiscard]] std::vector<flows::step> read_steps(load_state& s, const yaml::entry& e);

/// The checks over the whole flow: jump targets, cycles, placeholders and expressions.
void check_flow(load_state& s);

} // namespace sreh::config::flow_detail
