#pragma once

#include <string>

#include "actors/node/runtime.hpp"
#include "core/policy/policy.hpp"
#include "core/model/run.hpp"

namespace sreh::actors {

/// Decides whether run `r` may call `tool_name` with `args` as its step `n`: builds the policy
/// action (the tool's risk and scope, the run's labels, the mutating actions executed or still
/// running for rate limits) and asks the policy engine. A mutating action that is allowed is
/// held (runtime::holds) until `release_action` for its step. An unknown tool is allowed here:
/// the step then fails as unknown.
[[nodiscard]] policy::decision check_policy(runtime& rt, const run& r, const std::string& tool_name,
                                            const std::string& args, std::int64_t n);

/// The outcome of step `n` of run `run_id` is committed: a failed action no longer holds a slot of
/// the rate limits; one that succeeded keeps it until it leaves the window (the store counts it
/// too, once: holds the store shows are not counted twice).
void release_action(runtime& rt, const std::string& run_id, std::int64_t n, bool succeeded);

/// The run's actor stops without its outcomes (another node owns the run now): its holds go.
void release_run_actions(runtime& rt, const std::string& run_id);

/// The decision as journaled in the step's intent: {"effect","rule","reason","policy_version"}.
[[nodiscard]] std::string policy_json(const policy::decision& d, const policy::policy_set& p);

} // namespace sreh::actors
