#pragma once
// Running a flow (docs/flows.md, "Running a flow"): what a flow run does next, decided from the
// flow's pinned definition and what the run has journaled so far. The kernel's run actor does the
// rest — it journals each action's intent and outcome around its effect, asks policy, parks on
// approvals and timers, and recovers after a crash — so a flow run has a goal run's guarantees.
// `next_action` is a pure function of its view: the same journal always gives the same action,
// which is what makes a flow run replay and recover. Pure.

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/clock.hpp"
#include "core/base/expected.hpp"
#include "core/expr/expression.hpp"
#include "core/flows/flow.hpp"
#include "core/flows/reference.hpp"

namespace sreh::flows {

/// The step budget of a flow run (each check and timer of a wait is a journaled step).
inline constexpr std::int64_t max_run_steps = 10'000;

/// What a journaled step did for a flow step.
enum class phase {
  run,        // the step's own action: a tool call, an approval, the runs it started
  backoff,    // the wait before a retry
  check,      // a condition's choice, or one check of a wait's `until`
  sleep,      // a wait's timer (between two checks, or `wait: DURATION`)
  compensate, // the step's `compensate` call
};
[[nodiscard]] const char* to_string(phase p);
[[nodiscard]] std::optional<phase> parse_phase(std::string_view s);

/// One journaled step of a flow run as the runner reads it back (only steps with an outcome).
struct record {
  std::string step; // the flow step's id
  flows::phase phase = phase::run;
  int attempt = 1;
  bool ok = false;
  /// A failure no retry can change: a human's or the policy's denial, an expired approval, a
  /// tool that refused the call as asked (core/model/step.hpp: `retryable`).
  bool final = false;
  std::string result; // JSON; "" when none
  std::string error;
  timestamp_us started_at = 0;
  timestamp_us finished_at = 0;
};

/// How a step ended, as `steps.ID.status` and `steps.ID.output` read it.
struct step_result {
  std::string status; // succeeded | failed
  std::string output; // JSON; "" when none
};

/// A run a `goal`, `flow` or `parallel` step starts. `key` is unique in the flow run: the step's
/// id, then `/BRANCH` for a branch, `#N` for attempt N > 1.
struct child_run {
  enum kind_t { goal_run, flow_run, branch_run } kind = goal_run;
  std::string key;
  std::string goal;          // goal: the text, rendered
  std::string labels = "{}"; // goal: JSON object, rendered
  std::string flow;          // flow: the callee's name
  std::string inputs = "{}"; // flow: JSON object, rendered (checked against the callee's inputs)
  std::string parallel;      // branch: the parallel step
  std::string branch;        // branch: its name
};

/// How a run a step started ended, for `join`: `state` is empty while it has not.
struct child_end {
  std::string key;
  std::string run_id;
  std::string state; // "" | succeeded | failed | cancelled
  std::string conclusion;
  std::string error;
};

/// What the runs of a step add up to. `decided`: the step is over (`ok`, `error`); `cancel`: the
/// keys of runs still going that the step no longer needs (join any, or a failure under all).
struct join_result {
  bool decided = false;
  bool ok = false;
  std::string error;
  std::string output = "null"; // JSON: a goal's conclusion; else {KEY: {run, state, conclusion}}
  std::vector<std::string> cancel;
};
[[nodiscard]] join_result join(join_mode mode, bool single_goal,
                               const std::vector<child_end>& runs);

/// The next thing a flow run does.
struct action {
  enum kind_t {
    call_tool,  // a tool (policy decides on it like on any other)
    approve,    // ask people (`approval`)
    sleep,      // a durable timer until `until_us`
    check,      // journal a check that was evaluated now: `ok`, `result`, `error`
    start_runs, // start `runs` and wait for them (`join`, `timeout_ms`)
    succeed,    // the list ended
    fail,       // a step failed with `on_failure: fail`, or after compensating
  } kind = succeed;
  std::string step; // the flow step it belongs to ("" for succeed / fail)
  flows::phase phase = phase::run;
  int attempt = 1;
  std::string tool; // call_tool
  std::string args = "{}";
  approval_step approval; // approve (its reason rendered)
  timestamp_us until_us = 0;
  bool ok = true;     // check
  std::string result; // check: JSON
  std::string error;  // check (when !ok)
  std::vector<child_run> runs;
  join_mode join = join_mode::all;
  std::int64_t timeout_ms = 0;
  std::string message; // succeed / fail; also what the timeline says about the action
  std::string output;  // succeed: {"steps": {ID: {"status"}}}; start_runs of a parallel step:
                       // {ID: {"status", "output"}} of the steps that ended (a branch's prior)
};

/// A metric of world state (`world.ENTITY.METRIC`), or an error naming what is unknown.
/// `unavailable` means world state has not been observed yet since the run's last action: a
/// wait checks again shortly rather than judge the action on state from before it.
using world_lookup =
  std::function<expected<expr::value>(const std::string& entity, const std::string& metric)>;

/// What the runner reads.
struct run_view {
  const flow& f;
  /// The list the run executes: the flow's own steps (both empty), or one branch of a parallel
  /// step (a branch run).
  std::string parallel;
  std::string branch;
  const std::map<std::string, std::string>& inputs; // resolved, canonical JSON
  /// Steps that ended before this run began (a branch run: those of the run that started it).
  const std::map<std::string, step_result>& prior;
  const std::vector<record>& records; // in journal order
  timestamp_us now = 0;
  world_lookup world;
  /// How soon a wait checks again when world state was not observed yet (the world sync's
  /// period); never later than the wait's own `every`.
  std::int64_t world_retry_ms = 1000;
  /// The version of the world state `world` reads (0: none), recorded with each wait's check.
  std::uint64_t world_version = 0;
};

[[nodiscard]] action next_action(const run_view& v);

/// The spec a run of `f` is pinned to (run.spec): the flow's name, version, file and text, and
/// the resolved inputs; `extra` ("" or `,"key":value...`) adds members (a branch run's).
[[nodiscard]] std::string pin(const flow& f, const std::map<std::string, std::string>& inputs,
                              std::string_view extra = {});

} // namespace sreh::flows
