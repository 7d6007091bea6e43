#pragma once

#include <optional>
#include <string>
#include <vector>

#include "actors/runtime/runtime.hpp"
#include "core/model/run.hpp"
#include "core/model/step.hpp"
#include "core/policy/policy.hpp"

namespace sreh::actors {

/// A policy check of the call of `tool_name` with `args` as step `n` of a run, in two halves: the
/// action is built at once (the tool's risk and scope, the run's labels, now); when the tool
/// mutates and a rule limits its rate, the check needs the mutating actions executed or still
/// running in the window, from the store, and `history_since` says from when.
struct policy_check {
  const policy::policy_set* policy = nullptr; // the run's: the node's, or a fork's own
  policy::action action;
  std::string run_id;
  std::int64_t n = 0;
  bool known_tool = true;
  /// Set when decide() needs read_rate_history(since) first.
  std::optional<timestamp_us> history_since;
};

/// Builds the check of `policy` (the run's; it outlives the check) without I/O.
[[nodiscard]] policy_check prepare_policy_check(const runtime& rt, const policy::policy_set& policy,
                                                const run& r, const std::string& tool_name,
                                                const std::string& args, std::int64_t n);

/// The tool steps rate limits count since `since`, as the store has them (every node's).
/// Blocking (a store read): on the store pool.
[[nodiscard]] expected<std::vector<step>> read_rate_history(persistence::run_store& s,
                                                            timestamp_us since);

/// Decides (the policy engine), given the history read for the check (ignored when it needs
/// none). A mutating action that is allowed is held (runtime::holds) until `release_action` for
/// its step. An unknown tool is allowed here: the step then fails as unknown.
[[nodiscard]] policy::decision decide_policy(runtime& rt, policy_check& c,
                                             const expected<std::vector<step>>& history);

/// The outcome of step `n` of run `run_id` is committed: a failed action no longer holds a slot of
/// the rate limits; one that succeeded keeps it until it leaves the window (the store counts it
/// too, once: holds the store shows are not counted twice).
void release_action(runtime& rt, const std::string& run_id, std::int64_t n, bool succeeded);

/// The run's actor stops without its outcomes (another node owns the run now): its holds go.
void release_run_actions(runtime& rt, const std::string& run_id);

/// The decision as journaled in the step's intent: {"effect","rule","reason","policy_version"}.
[[nodiscard]] std::string policy_json(const policy::decision& d, const policy::policy_set& p);

} // namespace sreh::actors
