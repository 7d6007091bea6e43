#pragma once
// Private: the `mitigated` expression language of SCENARIOS.md.

#include <functional>
#include <string>
#include <string_view>

#include "core/base/expected.hpp"
#include "plugins/tools/sandbox/model.hpp"

namespace sreh::plugins::sandbox::detail {

/// Looks up `<entity>.<metric>`; an error message names what is unknown. `pos` is the 0-based
/// offset of the comparison in the expression.
using metric_lookup =
  std::function<expected<double>(const std::string& entity, const std::string& metric)>;

/// Evaluates `expr`: comparisons `<entity>.<metric> <op> <number>` (ops < <= > >= == !=) joined
/// with `and` / `or` (`and` binds tighter) and grouped with parentheses. Every comparison is
/// looked up (no short circuit), so evaluation also validates every name. Errors read
/// "position N: what" (1-based character position).
[[nodiscard]] expected<bool> evaluate_expression(std::string_view expr,
                                                 const metric_lookup& lookup);

/// Checks that `entity` exists in `w` and has `metric`: "" when it does, else the message
/// ("unknown entity 'x'", "unknown metric 'y' of service 'x' (expected one of ...)").
[[nodiscard]] std::string check_metric(const world_model& w, std::string_view entity,
                                       std::string_view metric);

} // namespace sreh::plugins::sandbox::detail
