#pragma once

#include <string>

#include "core/base/expected.hpp"
#include "plugins/tools/sandbox/model.hpp"

namespace sreh::plugins::sandbox {

/// Loads and validates a world file. Errors (code invalid_argument, or not_found when the file
/// cannot be read) read `FILE:LINE:COLUMN: field.path: what`.
[[nodiscard]] expected<world_model> load_world(const std::string& path);

/// Loads a scenario file; its `world` is a path relative to the scenario file or an inline
/// mapping. Checks every fault, herring and expectation against the world, including the
/// `mitigated` expression. Never throws.
[[nodiscard]] expected<scenario> load_scenario(const std::string& path);

/// Same, from text (`name` stands for the file in messages; relative world paths resolve from
/// the current directory).
[[nodiscard]] expected<scenario> load_scenario_string(const std::string& text,
                                                      const std::string& name);

} // namespace sreh::plugins::sandbox
