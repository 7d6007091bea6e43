#pragma once
// Replay: a recorded run run again from its journal, in a scratch in-process node, with no model
// server and no tool acting on anything. The model's answers are the recorded reason steps'
// responses and the tools' results are the recorded ones, while everything between them is
// live: context assembly (the request hash is compared), the choice of tool steps from the
// answers, argument validation, policy, approvals and the conclusion. The replay then compares
// its journal with the recording step by step (docs/replay.md).

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "actors/gateway/model_provider.hpp"
#include "actors/tools/tool.hpp"
#include "config/node/node_config.hpp"
#include "core/base/expected.hpp"
#include "core/journal/compare.hpp"
#include "core/model/approval.hpp"
#include "core/model/run.hpp"
#include "core/model/step.hpp"
#include "core/policy/policy.hpp"

namespace sreh::persistence {
class store;
}

namespace sreh::eval {

/// A run as it was journaled: the run, its steps and its approvals.
struct recording {
  run r;
  std::vector<step> steps;
  std::vector<approval> approvals;
};

/// Reads run `run_id` from `s`: a goal run or a flow run. Refused (invalid_argument, naming why)
/// for a run that has not ended, a flow run that started runs of its own (their journals are
/// not replayed), and a run with a step left in doubt; not_found for an unknown id.
[[nodiscard]] expected<recording> load_recording(persistence::store& s, const std::string& run_id);

using journal::step_comparison;

struct replay_report {
  std::string source_run, replay_run;
  std::string kind = "goal"; // goal | flow
  std::string goal;
  std::vector<step_comparison> steps;
  std::int64_t reason_steps = 0;          // in the recording
  std::int64_t same_request_hashes = 0;   // reason steps whose assembled request hashed the same
  std::string recorded_end, replayed_end; // "succeeded: <conclusion>", "failed: <error>"
  bool same_end = false;
  bool recorded_succeeded = false, replayed_succeeded = false;
  std::int64_t recorded_tool_steps = 0, replayed_tool_steps = 0;
  std::int64_t misses = 0; // calls and checks the replay asked for that the recording has not
  std::int64_t first_divergence = 0; // the first step that differs; 0 = none
  std::vector<std::string> notes;    // approvals decided as recorded, what could not be matched
  double wall_ms = 0;

  /// The same steps and the same end.
  [[nodiscard]] bool same() const { return first_divergence == 0 && same_end; }
};

struct replay_options {
  /// A replay that has not ended by then is cancelled (a guard: replays end in milliseconds).
  std::chrono::seconds run_timeout{120};
};

/// Replays `rec` on a scratch node built from `cfg` (the node's config: its tools, policy,
/// model section and budgets; its store, cluster, relay and listen address are not used).
/// `tools` and `provider` are the node's (app/serve/plugins.hpp), never called to act: each
/// tool is wrapped so that it answers with the recorded result, and a language-model provider
/// answers from the recorded reason steps. Deterministic providers (builtin) decide afresh
/// over the recorded results. A flow run runs its pinned flow again, its checks judged as
/// recorded and its timers firing at once. Approvals are decided with the recorded votes.
[[nodiscard]] expected<replay_report> replay(const recording& rec, const config::node_config& cfg,
                                             std::shared_ptr<actors::tool_registry> tools,
                                             policy::policy_set policy,
                                             actors::model_provider_ptr provider,
                                             const replay_options& opts = {});

/// The report as text for a terminal, and as JSON (`sreh replay --json`).
[[nodiscard]] std::string render_text(const replay_report& r);
[[nodiscard]] std::string render_json(const replay_report& r);

} // namespace sreh::eval
