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
/// the input ("cannot resolve a work that is cancelled"). `acknowledge` in mitigating or monitoring
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

// -- the Work as stored ------------------------------------------------------------------------

/// A Work: one row of the `works` table (persistence/store/work_store.hpp), written only by its
/// orchestrator through the committer. Its timeline is its events in the event log (the events
/// whose `run_id` is the Work's id: work.created, work.transition, ...).
struct work {
  std::string id;               // wrk_ + 26 characters
  std::string template_name;    // the template it was made from
  std::string template_version; // ... pinned to this version (work_template::version)
  std::string kind;             // incident | change | ... (the template's)
  std::string title;            // the template's title rendered with the fields
  std::string severity;         // the `severity` field when the template has one, else ""
  work_state state = work_state::open;
  std::string fields = "{}";   // JSON object: every field resolved (defaults filled in)
  std::string labels = "{}";   // JSON object of string labels (the template's run labels rendered)
  std::string creator;         // who made it (a token's identity, or "alertmanager")
  std::string idempotency_key; // empty when none was given
  std::string node_id;         // the node that owns it
  timestamp_us created_at = 0;
  timestamp_us updated_at = 0;
  sla_marks marks;               // when the SLA clocks stopped (created_at repeated there)
  std::vector<std::string> runs; // runs started for it, oldest first
  std::string active_run;        // the run going on now ("" = none)
  std::int64_t queued = 0;       // runs to start when the active one ends (enqueue, interrupt)
  std::int64_t triggers = 0;     // runs requested so far: run n's idempotency key is "<id>/run-<n>"
  std::int64_t sla_breached = 0; // bit (1 << sla_clock) per clock whose breach was announced
  timestamp_us holds_since = 0;  // world time since which the done-criteria hold; 0 = they do not
  timestamp_us world_at = 0;     // world time of the last evaluation of the criteria
  timestamp_us next_check = 0;   // wall time of its next timer (SLA or criteria); 0 = none
  std::int64_t seq = 0;          // events written for it (their run_seq)
  /// The alerts behind it (an Alertmanager group): JSON object fingerprint → "firing" |
  /// "resolved", as the last notification said.
  std::string alerts = "{}";
};

/// A template version as a Work pinned to it needs it after the file changed: its text.
struct stored_template {
  std::string name;
  std::string version; // work_template::version (a content hash)
  std::string kind;
  std::string text; // the YAML file's text, parsed again when a Work pinned to it is loaded
  timestamp_us first_seen = 0;
};

/// The stored document of a Work (every member, JSON) and back; the stores keep it as one
/// column beside the ones queries filter on. `internal` names what is wrong with a document.
[[nodiscard]] std::string to_document(const work& w);
[[nodiscard]] expected<work> work_from_document(std::string_view doc);

} // namespace sreh::works
