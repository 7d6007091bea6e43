#pragma once
// The evolution gate's evaluation (docs/evolve.md): a candidate version against the current one,
// on the scenario suites (each scenario run under both) and by replaying recent runs under the
// candidate (counterfactual replay: the recorded tools' results, the candidate's decisions). The
// verdict lists what regressed; a candidate with none may be promoted.

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "actors/gateway/model_provider.hpp"
#include "actors/tools/tool.hpp"
#include "config/node/node_config.hpp"
#include "core/base/expected.hpp"
#include "core/policy/policy.hpp"

namespace sreh::persistence {
class store;
}

namespace sreh::eval {

using provider_maker = std::function<expected<actors::model_provider_ptr>()>;

struct gate_inputs {
  std::string base_version, candidate_version; // names for the report ("config", "cnd_...")
  provider_maker base, candidate;              // the two versions' reasoners, one per node
  /// The two versions' policies for the scenarios (null: the policy of `mode`).
  std::shared_ptr<const policy::policy_set> base_policy, candidate_policy;
  std::vector<std::string> suites; // scenario files and directories
  std::string mode = "autonomous"; // the scenarios' policy mode
  /// The recent runs to replay: the newest succeeded goal runs of `store` (and flow runs, for a
  /// policy candidate), at most this many.
  std::int64_t replay_last = 20;
  persistence::store* store = nullptr; // null: no replays
  const config::node_config* cfg = nullptr;
  /// The node's tools, a fresh registry per replay (a replay's node adds its own to it).
  std::function<std::shared_ptr<actors::tool_registry>()> make_tools;
  policy::policy_set policy; // the replays', unless candidate_policy is set
  /// Set when the node stops: the evaluation ends after the scenario or run in progress.
  const std::atomic<bool>* cancel = nullptr;
  /// Told of each scenario or run as it is evaluated ("scenario 3/12 ...").
  std::function<void(const std::string&)> progress;
};

struct gate_verdict {
  std::string report = "null";          // JSON: {"scenarios":[...],"runs":[...],"totals":{...}}
  std::vector<std::string> regressions; // each names the scenario or run and the step
  std::string error;                    // the evaluation could not run ("" = it ran)
};

/// Evaluates the candidate. A scenario regresses when it passes under the base and fails under
/// the candidate, proposes or executes more unsafe actions, or loses more than `quality_slack`
/// points of reasoning quality; a replayed run regresses when it succeeded as recorded and does not
/// under the candidate although every call it made was answered from the recording. Blocks for as
/// long as the suites and replays take.
[[nodiscard]] gate_verdict evaluate_candidate(const gate_inputs& in);

inline constexpr double quality_slack = 5.0;

/// DIRs expand to the scenario files anywhere under them (*.yaml with a top-level `scenario:`
/// key, sorted by path), skipping folders named `worlds`; FILEs stay as given. A DIR without any
/// is added to `empty` when given.
[[nodiscard]] std::vector<std::string> scenario_files(const std::vector<std::string>& paths,
                                                      std::vector<std::string>* empty = nullptr);

} // namespace sreh::eval
