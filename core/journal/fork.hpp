#pragma once
// Forks (docs/fork.md): a new run that starts with the recorded steps 1..N−1 of a finished goal
// run — some tool results amended — and goes on live from step N, under the node's policy or a
// policy of its own. This part is pure: which runs and steps can be forked, the steps the fork
// starts with, and what its spec records. The kernel creates the fork (actors/kernel).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/expected.hpp"
#include "core/evolve/candidate.hpp"
#include "core/model/fork_origin.hpp"
#include "core/model/run.hpp"
#include "core/model/step.hpp"

namespace sreh::journal {

/// An amended tool result: recorded step `step` (before the fork's first live step) as if the
/// tool had answered `result` (JSON) or, with `error`, failed with it.
struct fork_edit {
  std::int64_t step = 0;
  std::string result; // JSON text; "" when it fails with `error`
  std::string error;
};

struct fork_request {
  std::string run_id;         // the run forked
  std::int64_t from_step = 0; // the fork's first live step
  /// The fork's own policy, as the text of a policy file (YAML or JSON); "" = the node's.
  std::string policy;
  /// Versions the fork reasons or acts with in place of its original's pins (docs/evolve.md):
  /// a candidate's id, in any state, or evolve::config_version.
  std::vector<std::pair<evolve::artefact, std::string>> versions;
  std::vector<fork_edit> edits;
  std::string submitter;
};

/// The body of `POST /v1/runs/{id}/fork`: `{"from_step": N, "config"?: {"policy"?: TEXT|OBJECT,
/// "versions"?: {KIND: "cnd_..." | "config"}}, "edits"?: [{"step": K, "result": JSON} |
/// {"step": K, "error": TEXT}]}` (run_id and submitter are left empty). An invalid_argument
/// error names the field: a missing or non-integer from_step, an unknown member, an unknown
/// kind or a malformed version, a policy given both ways, a model route or knowledge base given
/// as text (they are versions: propose them first), an edit of the wrong shape.
[[nodiscard]] expected<fork_request> parse_fork_request(std::string_view body, int max_depth = 64);

/// Whether run `source` with `steps` can be forked as `req` asks: `conflict` for a run that has
/// not ended or is not a goal run, `invalid_argument` naming the field for a step that is not
/// one of the run's (0, past its last), a step in doubt before it, and edits that name no
/// recorded tool step before `from_step`.
[[nodiscard]] sreh::error check_fork(const run& source, const std::vector<step>& steps,
                                     const fork_request& req);

/// The steps a fork `fork_id` of `source` starts with: copies of steps 1..from_step−1 with the
/// fork's run id and idempotency keys (`<fork id>:<n>`), the edits applied. `req` has passed
/// check_fork.
[[nodiscard]] std::vector<step> forked_steps(const std::vector<step>& steps,
                                             const fork_request& req, const std::string& fork_id);

/// The spec of a fork: `{"forked_from": {"run", "step"}, "edits": [N...], "policy"?: TEXT}`,
/// with what the original started with besides its goal (`original_spec`'s `context`,
/// `follow_up_of` and `priors`: a Work's story, the run it follows up), so the fork starts the
/// same.
[[nodiscard]] std::string fork_spec(const fork_request& req, std::string_view original_spec = {});

} // namespace sreh::journal
