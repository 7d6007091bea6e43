#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "actors/gateway/model_provider.hpp"
#include "core/conversation/steering.hpp"
#include "plugins/models/builtin/evidence.hpp"
#include "plugins/models/builtin/knowledge_base.hpp"
#include "plugins/models/builtin/toolbox.hpp"

namespace sreh::plugins::reasoner {

/// One piece of evidence: the step it came from, what it says, and its weight on a hypothesis.
struct fact {
  std::int64_t step = 0;
  std::string text;
  double weight = 0;
};

// -- triage ------------------------------------------------------------------------------------

/// The walk from the alerted entities down the call graph.
struct triage_result {
  std::optional<planned_call> next;          // a call the walk still needs
  std::vector<std::string> focus;            // the alerted entities
  std::string focus_source;                  // labels | goal | alerts | roots
  std::vector<std::string> leaves;           // anomalous, unexplained by dependencies
  std::map<std::string, std::string> parent; // how the walk reached an entity
  std::map<std::string, std::map<std::string, std::string>> classes; // anomalies per entity
  std::vector<std::string> off_path; // anomalous, but explain nothing on the path
  std::vector<std::string> healthy;
  std::vector<std::string> unobservable;          // describe failed
  std::vector<std::string> deferred;              // siblings of an explaining dependency, unseen
  std::map<std::string, std::string> deferred_by; // the caller that set a deferred entity aside
  std::vector<fact> observations;
  std::vector<goal_cue> cues;          // failure modes the goal text points at
  std::set<std::string> checked_first; // described first, as a message asked
};

/// How a walk may proceed.
struct walk_options {
  bool allow_calls = true;
  bool sweep = false; // observe the deferred siblings too
  step_range global;  // where deploys and flags count (all rounds)
  /// Entities an earlier round saw healthy: a later round does not describe them again.
  std::set<std::string> known_healthy;
  /// Entities an earlier round diagnosed and treated: their sticky classes do not count.
  std::set<std::string> treated;
  /// The frontier an earlier round set aside (entity, the caller that deferred it): when given,
  /// the walk looks at the alerted entities without following their calls and starts from here.
  std::vector<std::pair<std::string, std::string>> frontier;
};

/// What a decision reasons over: the knowledge base, the run's evidence so far, the calls the
/// node's tools offer, and the run (its goal and labels).
struct situation {
  const knowledge_base& kb;
  const evidence& ev;
  const toolbox& tools;
  const run& r;
  /// What people told the run not to touch (docs/conversation.md): no remedy acts on these.
  const std::vector<conversation::constraint>* constraints = nullptr;
  /// What people asked the run to check first ("check X first"): the walk describes these
  /// before anything else and follows the branches that lead to them first.
  const std::vector<conversation::directive>* checks_first = nullptr;
};

/// Walks from the focus; with `allow_calls` false, unknown entities count as healthy. Once a
/// dependency explains its caller, the caller's other dependencies are observed only in a
/// `sweep` (looking for independent faults when the budget allows).
[[nodiscard]] triage_result triage(const situation& sit, step_range range,
                                   const walk_options& opts);

/// The entities a walk starts from: the run's labels, else names in the goal, else firing
/// alerts, else the roots of the call graph, as (name, kind) in `out`. Returns the source
/// (labels | goal | alerts | roots), or "" when the alerts must be listed first.
[[nodiscard]] std::string find_focus(const evidence& ev, const run& r,
                                     std::vector<std::pair<std::string, std::string>>& out);

/// The failure modes the goal text cues (most specific first), then the causes of the run this
/// one follows up (its `priors`), then those the past cases recalled from memory name (their
/// `fault` label, best first), each mode once.
[[nodiscard]] std::vector<goal_cue> cues_of(const situation& sit);

/// True when the goal speaks of jobs ("a training job stalled") and the topology has some.
[[nodiscard]] bool goal_mentions_jobs(const std::string& goal, const evidence& ev);

/// An entity's anomaly classes as text: "class (why); class (why)".
[[nodiscard]] std::string classes_text(const std::map<std::string, std::string>& classes);

// -- evidence queries shared by the walk and the hypotheses ------------------------------------

/// Whether the call `c` was already made within `r` (whatever it returned).
[[nodiscard]] bool attempted(const evidence& ev, const planned_call& c, step_range r);

/// The latest logs of `name` read within `r`, or nullptr.
[[nodiscard]] const log_result* latest_logs(const evidence& ev, const std::string& name,
                                            step_range r);

/// The kind of the entity `name` ("service" when unknown).
[[nodiscard]] std::string kind_of(const evidence& ev, const std::string& name);

/// `s` with the characters special to an ECMAScript regex escaped.
[[nodiscard]] std::string regex_escape(const std::string& s);

// -- hypotheses ----------------------------------------------------------------------------------

enum class seen_state { seen, absent, unknown, not_applicable };

struct symptom_eval {
  const symptom* s = nullptr;
  seen_state state = seen_state::unknown;
  std::optional<planned_call> check; // resolves an unknown symptom
};

struct hypothesis {
  const failure_mode* mode = nullptr;
  std::string subject;
  std::string target; // empty while its binding is unknown
  std::map<std::string, std::string> bindings;
  double score = 0;
  double max_score = 0; // sum of positive weights
  std::vector<fact> evidence;
  std::vector<symptom_eval> symptoms;
  [[nodiscard]] double confidence() const;
  [[nodiscard]] bool seen(const std::string& symptom_id) const;
};

/// Competing explanations of one anomalous leaf.
struct hypothesis_group {
  std::string leaf;
  std::vector<hypothesis> hyps; // best first
  enum state_t { open, diagnosed, unknown } state = open;
  bool ambiguous = false; // diagnosed without the required margin
};

/// Judges the symptom `s` of `h` against the evidence within `range` (deploys and flags within
/// `global`): adds its weight to the score, its facts to the evidence and what it binds.
[[nodiscard]] symptom_eval judge_symptom(const situation& sit, step_range range, step_range global,
                                         hypothesis& h, const symptom& s);

/// Builds and scores the groups of the triage's leaves; the hosts under the leaves of `widen`
/// (ones that nothing of their own explains) are suspects too.
[[nodiscard]] std::vector<hypothesis_group> build_groups(const situation& sit,
                                                         const triage_result& t, step_range range,
                                                         step_range global,
                                                         const std::set<std::string>& widen = {});

/// Whether an anomalous entity explains itself, looked at before its dependencies are described:
/// when the goal cues a failure mode with a global check (a recent deploy, a flag change), that
/// check comes first, then — if it saw a change — the entity's logs. `self_explained` when the
/// entity's own leading hypothesis is then decided.
struct self_probe {
  std::optional<planned_call> next;
  bool self_explained = false;
  std::string why;
};
[[nodiscard]] self_probe probe_self(const situation& sit, const std::string& name, step_range range,
                                    step_range global, const std::vector<goal_cue>& cues);

/// Decides open groups (diagnosed / unknown) when `may_check` is false or nothing separates them;
/// otherwise returns the check with the highest expected information gain.
[[nodiscard]] std::optional<planned_call>
next_check(const knowledge_base& kb, std::vector<hypothesis_group>& groups, bool may_check);

// -- remediation ---------------------------------------------------------------------------------

struct remediation_record {
  std::string tool, args;
  std::int64_t step = 0;
  bool ok = false;
  bool verified = false;
  std::string for_what; // kind:target
  std::string note;
};

struct remediation_state {
  std::optional<planned_call> next;
  std::vector<remediation_record> records;
  std::vector<std::string> notes;        // "checkout error_rate back to 0.002 (step 9)"
  std::map<std::string, bool> mitigated; // by kind:target
  /// By kind:target, once verified: recovered | partial | not_recovered.
  std::map<std::string, std::string> recovery;
  std::set<std::string> partial;            // entities a verified remedy restored only in part
  std::int64_t last_action = 0;             // step of the last remedy call (0 = none)
  std::vector<std::string> still_anomalous; // alerted entities anomalous after the remedies
};

/// Walks the remedies of each diagnosis against the steps after the investigation (`sit.ev` may be
/// the evidence of the steps before a later round's first remedy).
[[nodiscard]] remediation_state remediate(const situation& sit, const triage_result& t,
                                          const std::vector<const hypothesis*>& diagnoses,
                                          const std::map<std::string, std::string>& leaf_of);

/// The call keys of every remedy action the diagnoses could take.
[[nodiscard]] std::set<std::string> remedy_keys(const situation& sit,
                                                const std::vector<const hypothesis*>& diagnoses);

// -- the decision --------------------------------------------------------------------------------

/// The next step of the run. Reads the run's memory (`ctx.memory`, its evidence so far) when
/// the context has one, and leaves the evidence of the new steps there; the decision is the
/// same either way.
[[nodiscard]] actors::decision decide(const knowledge_base& kb, const actors::run_context& ctx);

} // namespace sreh::plugins::reasoner
