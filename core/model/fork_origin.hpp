#pragma once
// What a forked run's spec says about its origin (docs/fork.md): the run and step it was forked
// from, the recorded steps whose results were amended, and its own policy. The kernel writes it
// when it creates the fork (core/journal/fork.hpp: fork_spec); the API shows it on the run.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/model/run.hpp"

namespace sreh {

struct fork_origin {
  std::string run_id;               // the run forked
  std::int64_t step = 0;            // the fork's first live step
  std::vector<std::int64_t> edited; // recorded steps whose results were amended
  std::string policy;               // the fork's own policy (a policy file's text); "" = the node's
};

/// Of a goal run's spec; none for a run that is not a fork.
[[nodiscard]] std::optional<fork_origin> fork_origin_of(const run& r);

} // namespace sreh
