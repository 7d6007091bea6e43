#pragma once
// The Work lifecycle (DESIGN.md, "Works control plane"): the pure state machine, the policy for a
// new trigger while a run is active ("double texting"), and SLA clocks. No I/O; the orchestrator
// actor drives it and journals every transition.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/clock.hpp"
#include "core/base/expected.hpp"

namespace sreh::works {

// -- states ------------------------------------------------------------------------------------

/// open → acknowledged → mitigating → monitoring → resolved | cancelled, with reopen.
/// `monitoring`: the done-criteria hold, but not yet for their whole window.
enum class work_state { open, acknowledged, mitigating, monitoring, resolved, cancelled };

enum class work_input {
  acknowledge,    // a person takes it: open → acknowledged (later states: recorded, no move)
  start_run,      // a run starts for it: open | acknowledged → mitigating
  criteria_hold,  // the done-criteria hold now: mitigating → monitoring
  criteria_lapse, // they stopped holding: monitoring → mitigating
  criteria_met,   // they held for their whole window: monitoring → resolved
  resolve,        // a person says it is done: any open state → resolved
  cancel,         // any open state → cancelled
  reopen,         // resolved | cancelled → open
};

[[nodiscard]] const char* to_string(work_state s);
[[nodiscard]] const char* to_string(work_input i);
[[nodiscard]] std::optional<work_state> parse_work_state(std::string_view s);
[[nodiscard]] std::optional<work_input> parse_work_input(std::string_view s);

/// resolved and cancelled: only `reopen` moves them.
[[nodiscard]] bool is_closed(work_state s);

/// The pure transition function: the next state, or a `conflict` error that names the state and
/// the input ("cannot resolve a cancelled work"). `acknowledge` in mitigating or monitoring
/// stays where it is (the acknowledgement is recorded by the caller).
[[nodiscard]] expected<work_state> transition(work_state from, work_input in);

// -- double texting ----------------------------------------------------------------------------

/// What a new trigger does while a run of the Work is active.
enum class double_texting { enqueue, join, interrupt, reject };

[[nodiscard]] const char* to_string(double_texting p);
[[nodiscard]] std::optional<double_texting> parse_double_texting(std::string_view s);

/// What the orchestrator does with a trigger.
enum class trigger_action {
  start,   // no run is active: start one now
  queue,   // enqueue: start one when the active run ends
  attach,  // join: the trigger is recorded on the active run's Work; no new run
  replace, // interrupt: cancel the active run, then start one
  refuse,  // reject: answer 409, change nothing
};

[[nodiscard]] const char* to_string(trigger_action a);

/// The action for a trigger under `policy`. A closed Work refuses every trigger (reopen first).
[[nodiscard]] trigger_action on_trigger(double_texting policy, bool run_active, work_state state);

// -- SLA clocks --------------------------------------------------------------------------------

/// Deadlines relative to the Work's creation; 0 = none.
struct sla_policy {
  std::int64_t acknowledge_ms = 0;
  std::int64_t mitigate_ms = 0; // until monitoring (the criteria first hold) or resolved
  std::int64_t resolve_ms = 0;
};

enum class sla_clock { acknowledge, mitigate, resolve };
[[nodiscard]] const char* to_string(sla_clock c);

/// When the clocks stopped (0 = still running).
struct sla_marks {
  timestamp_us created_at = 0;
  timestamp_us acknowledged_at = 0;
  timestamp_us mitigated_at = 0;
  timestamp_us resolved_at = 0;
};

struct sla_status {
  sla_clock clock;
  timestamp_us due_at = 0;
  timestamp_us stopped_at = 0; // 0 while running
  /// Not stopped in time: stopped after due_at, or still running at `now` >= due_at.
  bool breached = false;
};

/// Every clock the policy sets, as of `now`.
[[nodiscard]] std::vector<sla_status> sla_clocks(const sla_policy& p, const sla_marks& m,
                                                 timestamp_us now);

/// The earliest due time after `now` of a clock still running — when the
/// orchestrator's durable timer should fire next; nullopt when none is pending.
[[nodiscard]] std::optional<timestamp_us> next_sla_deadline(const sla_policy& p, const sla_marks& m,
                                                            timestamp_us now);

} // namespace sreh::works
