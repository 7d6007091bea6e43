#pragma once
// The evolution gate's candidates (docs/evolve.md): a new version of something the agent reasons
// with, proposed by someone, evaluated against the current version (the scenario suites and a
// counterfactual replay of recent runs: eval/evolve.hpp), refused when anything regresses, and
// otherwise promoted once approvers other than the proposer accept it. Runs pin the version
// current when they start. This is the model and its wire shape only. Pure.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/clock.hpp"
#include "core/base/expected.hpp"
#include "core/model/approval.hpp"

namespace sreh::evolve {

/// What a candidate replaces: the builtin reasoner's knowledge base, the node's policy, the
/// system prompt a model route is sent, or the model route itself (the `model:` section and
/// its `models:`). A run reasons with one knowledge base, prompt and route together (the
/// three `reasoning` kinds) and acts under one policy.
enum class artefact { knowledge_base, policy, prompt, model_route };

/// Every kind, in the order the wire lists them.
inline constexpr artefact all_artefacts[] = {artefact::knowledge_base, artefact::policy,
                                             artefact::prompt, artefact::model_route};

/// Whether `a` shapes the reasoner (a knowledge base, a prompt, a route) rather than the policy.
[[nodiscard]] constexpr bool reasoning(artefact a) {
  return a != artefact::policy;
}

/// evaluating → refused | failed | awaiting_approval → promoted → superseded | rolled_back.
/// `failed`: the evaluation could not run (a scenario suite that does not load); `superseded`: a
/// later candidate was promoted over it; `rolled_back`: `sreh evolve rollback` restored the
/// version it had replaced.
enum class candidate_state {
  evaluating,
  refused,
  failed,
  awaiting_approval,
  promoted,
  superseded,
  rolled_back
};

[[nodiscard]] const char* to_string(artefact a);
[[nodiscard]] const char* to_string(candidate_state s);
[[nodiscard]] std::optional<artefact> parse_artefact(std::string_view s);
[[nodiscard]] std::optional<candidate_state> parse_candidate_state(std::string_view s);

/// The version of an artefact the node's config gives (`model.kb` or the embedded knowledge
/// base; `policy_file` or `policy_mode`; `model.system_prompt` or the built-in prompt; the
/// config's `model:` and `models:`).
inline constexpr std::string_view config_version = "config";

/// Largest body a candidate may have (a knowledge base is tens of KiB, a policy less).
inline constexpr std::size_t max_body_bytes = 1024 * 1024;

struct candidate {
  std::string id;            // cnd_...
  std::int64_t revision = 1; // each committed change is the next (its event's run_seq)
  artefact kind = artefact::knowledge_base;
  candidate_state state = candidate_state::evaluating;
  std::string proposer;
  std::string reason; // what the proposer says it changes
  std::string body;   // the artefact's text: a knowledge-base, policy or model-route YAML
                      // document, or a system prompt
  std::string sha256; // of the body
  /// The version it was evaluated against: `config_version` or a promoted candidate's id.
  std::string base{config_version};
  std::string report = "null"; // the evaluation's report (JSON, eval/evolve.hpp)
  /// What regressed against `base`, one line each naming the scenario or run and the step:
  /// a refused candidate's reasons.
  std::vector<std::string> regressions;
  std::string error; // why the evaluation could not run (state failed)
  /// The promotion's approval, created when the evaluation finds no regression: `required`
  /// distinct people holding one of `roles`, never the proposer (core's apply_vote rule).
  std::optional<approval> promotion;
  std::string replaced; // at promotion: the version it replaced (config_version or an id)
  std::string ended_by; // who rolled it back; "" otherwise
  timestamp_us created_at = 0;
  timestamp_us evaluated_at = 0;
  timestamp_us promoted_at = 0;
  timestamp_us ended_at = 0; // superseded or rolled back
};

/// The version of `kind` that the run spec `spec` pinned when the run began (`"versions":
/// {"knowledge_base": "cnd_..."}`); config_version when it pinned none.
[[nodiscard]] std::string pinned_version(std::string_view spec, artefact kind);
/// `spec` (a run's spec, a JSON object) with `version` of `kind` pinned; with config_version,
/// `kind`'s pin removed (no pin is the config's version).
[[nodiscard]] std::string pin_version(std::string_view spec, artefact kind,
                                      std::string_view version);
/// `spec` without any pin, as compact JSON: the run's spec as its request gave it ("{}" when
/// nothing else is in it). Two specs that differ only by their pins read the same.
[[nodiscard]] std::string unpinned(std::string_view spec);

/// The one promoted candidate of `kind` among `all` (the current version), if any.
[[nodiscard]] const candidate* current_of(const std::vector<candidate>& all, artefact kind);

[[nodiscard]] std::string to_json(const candidate& c);
/// Decodes `to_json`'s shape; errors name the field.
[[nodiscard]] expected<candidate> candidate_from_json(std::string_view text);

} // namespace sreh::evolve
