#pragma once
// Private: the names of the `mitigated` expressions of SCENARIOS.md (the language itself is
// core/expr, shared with Work templates and flows).

#include <string>
#include <string_view>

#include "core/base/expected.hpp"
#include "plugins/tools/sandbox/model.hpp"

namespace sreh::plugins::sandbox::detail {

/// Checks that `entity` exists in `w` and has `metric`: "" when it does, else the message
/// ("unknown entity 'x'", "unknown metric 'y' of service 'x' (expected one of ...)").
[[nodiscard]] std::string check_metric(const world_model& w, std::string_view entity,
                                       std::string_view metric);

} // namespace sreh::plugins::sandbox::detail
