#pragma once
// Postmortems (docs/postmortems.md): the account of a finished run, generated from its journal
// and its approvals — what happened and when, what caused it and on which evidence, what was
// done and who approved it, what did not work, and what to do next — and of a closed Work, its
// runs' accounts merged with its own timeline. Pure: the same journal and
// approvals give the same document, byte for byte, so regenerating one changes nothing.
//
// The root cause and its evidence come from the conclusion's structured result when the
// reasoner wrote one (the builtin's `detail.result`, plugins/models/builtin/reasoner.hpp);
// otherwise from the conclusion's text alone. Times are the journal's.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/base/clock.hpp"
#include "core/base/json.hpp"
#include "core/memory/memory.hpp"
#include "core/model/approval.hpp"
#include "core/model/event.hpp"
#include "core/model/outcome.hpp"
#include "core/model/run.hpp"
#include "core/model/step.hpp"
#include "core/works/work.hpp"

namespace sreh::postmortem {

/// One line of the timeline: a step, an approval's vote, or the run's start and end.
struct event {
  timestamp_us at = 0;
  std::int64_t step = 0; // 0: not a step of its own (the run's start and end)
  std::string what;
  std::string run; // a Work's postmortem: the run whose step it is ("" for the Work's own)
};

/// A cause the run concluded, with the steps whose results support it.
struct cause {
  std::string kind;   // the failure mode (`bad_deploy`); "" when the conclusion names none
  std::string target; // what it is on (a service, host, flag)
  double confidence = 0;
  std::vector<std::int64_t> evidence_steps; // in step order, each once
  std::vector<std::string> evidence;        // "step 4: checkout deployed v2.4.1 10 min ago"
  std::string run;                          // a Work's postmortem: the run that found it
};

/// A mutating action the run took.
struct action {
  std::int64_t step = 0;
  std::string tool;
  std::string args = "{}";
  std::string state;       // succeeded | failed | cancelled | in_doubt
  bool verified = false;   // its post-condition held afterwards
  std::string check;       // that post-condition and what was observed
  std::string approved_by; // "alice, bob" when people approved it; "" when policy allowed it
  timestamp_us approved_at = 0;
  std::string for_what; // kind:target, when the conclusion says
  std::string run;      // a Work's postmortem: the run that took it
};

struct document {
  std::string run_id;  // a run's postmortem
  std::string work_id; // a Work's: its runs' postmortems merged with its own timeline
  std::string title;
  std::string summary;
  std::string outcome; // the run's: succeeded | failed | cancelled
  // -- impact
  std::vector<std::string> affected;
  timestamp_us started_at = 0;   // the first sign of it: the alert's start, else the run's
  timestamp_us detected_at = 0;  // when the run was asked
  timestamp_us mitigated_at = 0; // the first verified remedy (0: none)
  timestamp_us ended_at = 0;     // when the run ended
  // -- what happened
  std::vector<event> timeline;
  std::vector<cause> causes;
  std::vector<action> actions;
  std::vector<std::string> did_not_work;
  std::vector<std::string> follow_ups;
  // -- for memory
  std::string service; // the alerted service (labels), else the first affected
  std::string alert;   // the alert's name (labels), "" when none
};

/// The postmortem of the finished run `r` from its steps (in order) and approvals. Its actions
/// are the conclusion's remedies, the steps people approved and, when `mutating` says which
/// tools change something, every call of such a tool that ran (allowed by policy, unasked).
[[nodiscard]] document of_run(const run& r, const std::vector<step>& steps,
                              const std::vector<approval>& approvals,
                              const outcome::mutating_fn& mutating = {});

/// A run of a Work, as the Work's postmortem reads it.
struct run_record {
  run r;
  std::vector<step> steps;
  std::vector<approval> approvals;
};

/// The postmortem of Work `w` from its timeline (its events, in order) and its runs (oldest
/// first): each run's causes, actions and what did not work, tagged with the run; one timeline
/// of the Work's transitions, comments, alerts and SLA breaches and its runs' steps; the impact
/// from the Work's SLA marks and the runs; follow-ups of the runs and of the Work (an SLA
/// breached, a reopened Work).
[[nodiscard]] document of_work(const works::work& w, const std::vector<sreh::event>& timeline,
                               const std::vector<run_record>& runs,
                               const outcome::mutating_fn& mutating = {});

/// The document as Markdown, the way a team reads a postmortem.
[[nodiscard]] std::string to_markdown(const document& d);

/// The document as a JSON object.
void write_json(json::writer& w, const document& d);
[[nodiscard]] std::string to_json(const document& d);

/// What a later case needs of it, as text: the title and summary, each cause with the facts of
/// its evidence, what was done and what did not work, the follow-ups — without the timeline and
/// the document's headings, whose words every postmortem shares and a search would match.
[[nodiscard]] std::string to_digest(const document& d);

/// What long-term memory keeps of it: kind `postmortem`, the digest as text (cut to the memory
/// limit), labels `service`, `alert`, `fault` (the first cause's kind), `run` (a Work's: `work`),
/// and the affected entities — so that a later case like it recalls it (docs/memory.md).
[[nodiscard]] memory::draft as_memory(const document& d);

} // namespace sreh::postmortem
