#pragma once
// What happens to a Work (work.hpp) on each thing the orchestrator hears of: a person's
// command, a run started or ended, the done-criteria evaluated against world state, the SLA
// clocks. Each function changes the Work and says what to write (its timeline events) and what
// to do (start a run, cancel the active one); the orchestrator commits the Work with the events
// before it does anything. Pure: no I/O, no clock of its own.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/clock.hpp"
#include "core/base/expected.hpp"
#include "core/works/template.hpp"
#include "core/works/work.hpp"

namespace sreh::works {

/// What a person may do to a Work (POST /v1/works/{id}/{command}), and `alerts`: what an
/// alert receiver reports of the alerts behind it (not a route of its own).
enum class work_command { ack, resolve, reopen, cancel, comment, trigger, alerts };
[[nodiscard]] const char* to_string(work_command c);
[[nodiscard]] std::optional<work_command> parse_work_command(std::string_view s);

/// One entry of a Work's timeline: an event of kind `kind` (work.created, work.transition,
/// work.comment, work.triggered, work.run_started, work.run_ended, work.criteria,
/// work.sla_breached) with a JSON object of data.
struct timeline_entry {
  std::string kind;
  std::string data;
};

struct effects {
  std::vector<timeline_entry> entries;
  bool start_run = false;  // start the Work's next run (after the commit)
  bool cancel_run = false; // cancel its active run (after the commit)
};

/// A person's command. Errors change nothing: `conflict` for a transition the state does not
/// allow ("cannot resolve a work that is cancelled") or a trigger the double-texting policy
/// refuses, `invalid_argument` for a comment without text.
[[nodiscard]] expected<effects> apply_command(work& w, const work_template& t, work_command c,
                                              std::string_view by, std::string_view text,
                                              timestamp_us now);

/// `alerts`' text: `{"alerts": {FINGERPRINT: "firing" | "resolved", ...}, "truncated": N}`.
/// Merged into `w.alerts`; a `work.alerts` entry lists what changed (new or changed
/// fingerprints by status, and alerts the sender truncated), none when nothing did — so a
/// repeated notification changes nothing. `invalid_argument` for another shape.
[[nodiscard]] expected<effects> merge_alerts(work& w, std::string_view by, std::string_view text,
                                             timestamp_us now);

/// The Work was made: its first timeline entry, and its first run when the template has a goal.
[[nodiscard]] effects on_created(work& w, const work_template& t);

/// The run for trigger `n` exists (`created` false: it existed already, after a crash).
[[nodiscard]] effects on_run_started(work& w, const std::string& run_id, std::int64_t n,
                                     bool created, timestamp_us now);
/// The active run ended in `state` ("succeeded", ...) with `outcome` (what it achieved,
/// core/model/outcome.hpp; "" when none); the next queued run is then due. A run that is not
/// the active one changes nothing (a repeated notice).
[[nodiscard]] effects on_run_ended(work& w, const std::string& run_id, std::string_view state,
                                   timestamp_us now, std::string_view outcome = {});
/// Starting a run failed for good (`why`): the trigger is dropped and recorded.
[[nodiscard]] effects on_run_refused(work& w, std::string_view why, timestamp_us now);

/// The done-criteria evaluated at world time `world_at`: `holds`, or why they could not be
/// evaluated (an entity or metric world state does not have). In mitigating, holding moves the
/// Work to monitoring; in monitoring, holding for `for_s` of world time with no run active
/// resolves it, and not holding moves it back. Other states change nothing. An error is
/// recorded only when it differs from `last_error` (the caller keeps it).
[[nodiscard]] effects on_criteria(work& w, const expected<bool>& holds, timestamp_us world_at,
                                  std::int64_t for_s, std::string_view last_error,
                                  timestamp_us now);

/// Announces each SLA clock that ran past its deadline since the last call (once per clock).
[[nodiscard]] effects on_sla(work& w, const sla_policy& p, timestamp_us now);

/// When the orchestrator should look at the Work again: the next SLA deadline not yet
/// announced, and every `check_every_us` while the done-criteria are to be evaluated (mitigating,
/// monitoring); 0 = never (closed, or nothing pending).
[[nodiscard]] timestamp_us next_check(const work& w, const work_template& t,
                                      std::int64_t check_every_us, timestamp_us now);

/// The idempotency key of the Work's run for trigger `n`: "<work id>/run-<n>".
[[nodiscard]] std::string run_key(const work& w, std::int64_t n);

} // namespace sreh::works
