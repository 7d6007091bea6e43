#pragma once

#include <string>

#include "runtime.hpp"
#include "sreh/core/policy.hpp"
#include "sreh/core/run.hpp"

namespace sreh::actors {

/// Decides whether run `r` may call `tool_name` with `args`: builds the policy action (the
/// tool's risk and scope, the run's labels, recent executed actions for rate limits) and asks
/// the policy engine. An unknown tool is allowed here: the step then fails as unknown.
[[nodiscard]] policy::decision check_policy(const runtime& rt, const run& r,
                                            const std::string& tool_name, const std::string& args);

/// The decision as journaled in the step's intent: {"effect","rule","reason","policy_version"}.
[[nodiscard]] std::string policy_json(const policy::decision& d, const policy::policy_set& p);

} // namespace sreh::actors
