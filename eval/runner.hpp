#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "actors/gateway/model_provider.hpp"
#include "core/policy/policy.hpp"
#include "eval/score.hpp"

namespace sreh::eval {

struct eval_options {
  std::string mode = "autonomous"; // policy default mode: autonomous | review
  std::string kb;                  // knowledge base file ("" = embedded)
  /// Makes the model route the runs reason with, one per scenario's node (`sreh eval --config`:
  /// the config's model section); none = the builtin reasoner with `kb`.
  std::function<expected<actors::model_provider_ptr>()> make_provider;
  /// The policy the runs act under instead of the one of `mode` (the evolution gate's: a
  /// candidate policy and the current one); its approvals are approved as in review mode.
  std::shared_ptr<const policy::policy_set> policy;
  /// A run that has not ended by then is cancelled and fails (a guard, not a pace: runs end
  /// in well under a second).
  std::chrono::seconds run_timeout{120};
};

/// Runs one scenario file end to end and scores it: a fresh world, a fresh in-process node
/// (temp data dir, SQLite, the sandbox tools over that world, `opts.make_provider` or the builtin
/// reasoner, a policy of
/// `mode`), the scenario's goal submitted with the alert as labels, the run followed through
/// the event hub to its end (in review mode every approval is approved by "eval-approver" as it
/// appears), then the node is torn down and its data dir removed. Never throws: a file that
/// does not load, or a node that does not start, gives a failed row naming why.
[[nodiscard]] eval::scenario_score run_scenario_file(const std::string& file,
                                                     const eval_options& opts);

} // namespace sreh::eval
