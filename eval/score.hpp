#pragma once
// Scoring of one scenario run (docs/scenarios.md, "What a good run achieves"). Pure: the caller
// gathers the run, its steps and the world after the run; nothing here touches a node or a world.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/model/run.hpp"
#include "core/model/step.hpp"
#include "core/quality/quality.hpp"
#include "plugins/tools/sandbox/model.hpp"

namespace sreh::eval {

// -- inputs ------------------------------------------------------------------------------------

/// One tool step of the finished run.
struct step_record {
  std::int64_t n = 0;
  std::string tool;
  std::string target;    // the tool's scope target (service, host, database, flag, job)
  bool mutating = false; // the tool is not idempotent
  step_state state = step_state::intent;
  std::string error;         // "not executed: denied by policy (...)", a tool error, ...
  std::string policy_effect; // allow | require_approval | deny ("" when not journaled)
};

/// The finished run as the store holds it.
struct run_record {
  std::string run_id;
  run_state state = run_state::failed;
  std::string error;              // why the run failed or was cancelled
  std::string conclusion;         // the readable summary
  std::string detail;             // `decision.detail` of the conclusion step ("" without one)
  std::vector<step_record> steps; // tool steps, in order
  std::vector<step> journal;      // every step as journaled (the evolution gate compares them)
  std::int64_t approvals_requested = 0;
  /// How well it reasoned (core/quality), as the kernel stored it when the run ended; none for a
  /// run that did not end.
  std::optional<quality::score> quality;
};

/// The world after the run.
struct world_record {
  std::optional<bool> mitigated; // the `mitigated` expression now (nullopt: none, or an error)
  std::string mitigated_error;   // why the expression could not be evaluated
  std::string mitigated_values;  // "checkout.error_rate=0.002, ..." for the report
  /// Simulated seconds from the scenario start to the first moment the expression held, when
  /// the runner observed it.
  std::optional<std::int64_t> mitigated_after_s;
  std::int64_t elapsed_s = 0;       // simulated seconds at the end of the run
  std::vector<std::string> actions; // "tool:target" of every action in the world's log
};

// -- result ------------------------------------------------------------------------------------

/// The score of one scenario. Booleans ending in `_ok` compare the run with the expectation.
struct scenario_score {
  std::string id; // the scenario id ("" when it did not load)
  std::string file;
  std::string run_id;
  std::string error; // the scenario could not be loaded or run
  bool passed = false;
  std::vector<std::string> failures; // why it did not pass, one reason each

  bool control = false;   // expect.detected is false
  bool concluded = false; // the run succeeded with a structured conclusion
  bool detected = false;  // what the run claimed
  bool detected_ok = false;
  std::vector<std::string> targets;         // diagnosed targets
  std::vector<std::string> missing_targets; // expected, not diagnosed
  std::vector<std::string> extra_targets;   // diagnosed, not expected (reported, not failed)
  bool localized_ok = false;
  std::vector<std::string> kinds; // diagnosed kinds
  std::vector<std::string> missing_kinds;
  bool root_cause_ok = false;
  std::string recovery;          // the conclusion's result.recovery ("" when unstated)
  bool recovery_ok = true;       // equals expect.recovery, or that is not set
  std::optional<bool> mitigated; // nullopt for control cases
  std::string mitigated_reason;  // why not (or the values when it held)

  std::int64_t steps = 0; // tool steps
  std::int64_t max_steps = 0;
  bool within_max_steps = false;
  std::int64_t unsafe_proposed = 0;   // steps matching `expect.forbidden`
  std::int64_t unsafe_blocked = 0;    // ... refused by policy or a human
  std::int64_t unsafe_executed = 0;   // ... applied to the world
  std::vector<std::string> unsafe;    // "tool:target: executed|blocked|failed"
  std::int64_t mutating_executed = 0; // actions in the world's log
  std::int64_t approvals_requested = 0;
  std::optional<std::int64_t> time_to_mitigate_s; // simulated
  std::int64_t elapsed_s = 0;                     // simulated time at the end
  double wall_ms = 0;                             // filled by the runner
  std::string conclusion;
  std::optional<quality::score> quality; // the run's reasoning quality (none: it never ran)
  std::vector<step> journal;             // the run's steps (none: it never ran)
};

/// Scores a finished run against the scenario's expectation.
[[nodiscard]] scenario_score score(const plugins::sandbox::expectation& expect,
                                   const run_record& run, const world_record& world);

/// The row of a scenario that could not be loaded or run: failed, with `error` as the reason.
[[nodiscard]] scenario_score failed_row(std::string file, std::string error);

/// True when a step was not executed because policy or a human refused it.
[[nodiscard]] bool refused(const step_record& s);

} // namespace sreh::eval
