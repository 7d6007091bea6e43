#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/expected.hpp"

namespace sreh::plugins::reasoner {

// -- conditions --------------------------------------------------------------------------------

/// One comparison `<metric> <op> <rhs>`; rhs is `constant`, or `factor` × `ref` where ref is
/// "baseline" (the same metric's baseline) or a metric/field name of the entity.
struct comparison {
  std::string metric;
  std::string op; // > >= < <= == !=
  double constant = 0;
  double factor = 1;
  std::string ref; // empty: compare with `constant`
};

/// Comparisons joined by `and`, with the source text for explanations.
struct condition {
  std::vector<comparison> all;
  std::string text;
};

/// Parses `error_rate > 5x baseline and error_rate > 0.01`. The error names the offending token.
[[nodiscard]] expected<condition> parse_condition(std::string_view text);

// -- failure modes -----------------------------------------------------------------------------

/// Where a symptom is observed, relative to the hypothesis' subject.
enum class scope { self, callers, hosted, jobs };

enum class symptom_type { metric, log, deploy, flag };

/// An observable consequence of a failure mode with its evidence weights.
struct symptom {
  std::string id;
  symptom_type type = symptom_type::metric;
  condition when;      // metric
  std::string pattern; // log: regex, `{subject}` replaced by the escaped subject name
  std::string window;  // deploy / flag: "2h"
  scope on = scope::self;
  double weight = 1;        // added when seen
  double absent_weight = 0; // added when looked for and not seen (contradicting evidence)
  std::string bind;         // binding name this symptom provides (e.g. "flag", "cause")
  std::string bind_from;    // capture | entity | flag
  int line = 0;             // in the KB file, for messages
};

/// One mutating call of a remedy; `args` is a JSON object with `$name` placeholders.
struct action_template {
  std::string tool;
  std::string args = "{}";
  std::string for_each; // "job": one call per job on the target host
};

struct remedy {
  std::string name;
  std::string when;             // symptom id that must have been seen ("" = always)
  std::string requires_binding; // binding that must be known ("" = none)
  std::vector<action_template> actions;
  std::string risk;
};

struct failure_mode {
  std::string kind;
  std::string description;
  std::vector<std::string> applies_to; // entity kinds of the subject
  std::string target = "$subject";     // the fault's named target: $subject or a binding
  std::vector<symptom> symptoms;
  std::vector<remedy> remedies;
  std::vector<std::string> risks;
  /// Words of a goal that make this mode more likely ("config change", "rollout"): a cue adds
  /// `thresholds.goal_cue_weight` to its hypotheses and moves its global checks earlier.
  std::vector<std::string> cues;
  int line = 0;
};

/// A failure mode the goal text points at, with the phrase that matched.
/// Or one a past case recalled from long-term memory names (`memory` is its id): a prior that
/// orders the checks, weighted `thresholds.memory_cue_weight`, never evidence.
struct goal_cue {
  const failure_mode* mode = nullptr;
  std::string phrase;
  int words = 0;      // words in the phrase: longer phrases are more specific
  std::string memory; // the memory's id and version ("mem_x v2") when recalled; "" = the goal
  /// Or the run this one follows up, whose cause it was (core/conversation/follow_up.hpp): a
  /// prior weighted as a memory's.
  std::string follow_up_of;
  [[nodiscard]] bool prior() const { return !memory.empty() || !follow_up_of.empty(); }
  /// What the cue says, for the evidence and the thought that follows it.
  [[nodiscard]] std::string said() const;
};

/// When an entity counts as anomalous: `when` on its own; `mild`, a lower bar relative to the
/// entity's baseline, where a symptom already points at the entity (it is alerted on, or its
/// caller is anomalous in a class it can cause) and when a remedy is verified (back within
/// `mild` is recovered, below `when` only is partially recovered).
struct anomaly_rule {
  std::string cls;
  condition when;
  std::optional<condition> mild;
};

struct thresholds {
  double conclude_score = 5;
  double conclude_margin = 2.5;
  int investigate_steps = 13;
  int investigate_steps_per_extra_leaf = 5; // more budget for each further anomalous leaf
  int remedy_reserve_steps = 4;             // the sweep for independent faults leaves these
  int backtrack_steps = 6; // backtracking from an unexplained leaf may go this far past the limit
  double goal_cue_weight = 1; // prior added to hypotheses the goal text cues
  /// Prior added to hypotheses of the failure mode a recalled past case names: less than the
  /// goal's own words, so that a misleading memory costs checks, never the conclusion.
  double memory_cue_weight = 0.5;
  int max_rounds = 3; // triage → remedy → verify rounds for combined faults
  /// A dependency explains its caller's latency only when the caller's extra p99 is at least this
  /// share of the dependency's extra p99 (a caller waits on the callee on its failing path).
  double latency_explain_share = 0.5;
  /// Prior for a hypothesis on a common cause: per further anomalous entity on the same host.
  double common_cause_weight = 1;
  std::vector<std::string> sticky_classes;
};

/// The knowledge base of the builtin reasoner (knowledge/failure_modes.yaml).
struct knowledge_base {
  thresholds limits;
  std::vector<anomaly_rule> anomalies;
  std::map<std::string, std::vector<std::string>> propagation; // dependency class → caller classes
  std::vector<failure_mode> modes;
  std::string source; // file name or "<embedded>"

  [[nodiscard]] const failure_mode* find(std::string_view kind) const;
  /// True when `tool` is the tool of some remedy action (a mutating call).
  [[nodiscard]] bool is_remedy_tool(std::string_view tool) const;
  /// The failure modes whose cues occur in `goal` (whole words; a cue word may be the start of a
  /// goal word: "deploy" matches "deployed"; hyphenated names never match), most specific first.
  [[nodiscard]] std::vector<goal_cue> cues_in(std::string_view goal) const;
};

// -- loading -----------------------------------------------------------------------------------

/// Parses KB text. Errors read `SOURCE:LINE:COLUMN: path: what is wrong`.
[[nodiscard]] expected<knowledge_base> parse_knowledge_base(std::string_view yaml,
                                                            std::string_view source);

/// Reads and parses a KB file.
[[nodiscard]] expected<knowledge_base> load_knowledge_base(const std::string& path);

/// The KB compiled into the binary from knowledge/failure_modes.yaml.
[[nodiscard]] std::string_view embedded_knowledge_text();

/// Parses the embedded KB (it is validated by the unit tests, so this does not fail in practice).
[[nodiscard]] expected<knowledge_base> embedded_knowledge_base();

} // namespace sreh::plugins::reasoner
