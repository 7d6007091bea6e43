#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "actors/kernel/cluster_view.hpp"
#include "core/base/expected.hpp"
#include "core/conversation/message.hpp"
#include "core/journal/fork.hpp"
#include "core/model/approval.hpp"
#include "core/model/goal.hpp"
#include "core/model/run.hpp"

namespace sreh::actors {

struct submit_reply {
  std::string run_id;
  bool created = true; // false: the idempotency key named an existing run
};

/// What `say` did (docs/conversation.md).
struct say_reply {
  conversation::message said;                  // the message as committed
  std::optional<conversation::message> answer; // the agent's reply, when it was a question
  bool created = true; // false: the idempotency key named an earlier message
};

struct kernel_stats {
  std::int64_t active_runs = 0; // run actors alive
  std::int64_t started = 0;
  std::int64_t finished = 0;
  std::int64_t recovered = 0;
  std::int64_t steps = 0;
  std::int64_t parked = 0; // runs waiting (no actor), as known to the kernel
  std::int64_t pending_approvals = 0;
};

/// The kernel as seen from the HTTP front and other non-actor code: thread-safe and
/// non-blocking; each callback runs once, on an actor thread, and must not block.
class kernel_api {
 public:
  virtual ~kernel_api() = default;
  /// Creates and starts a run (or returns the run of a repeated idempotency key). In a cluster
  /// the run is placed on the least-loaded live worker node; cancel and decide go to the node
  /// that owns the run.
  virtual void submit(goal_request req, std::function<void(expected<submit_reply>)> done) = 0;
  /// Cancels a run; the in-flight tool sees the cancellation. Returns the state it ends in.
  /// `conflict` when the run already ended, `not_found` when there is no such run.
  virtual void cancel(std::string run_id, std::string by,
                      std::function<void(expected<run_state>)> done) = 0;
  /// Records a human decision on an approval (idempotent per identity) and, when it settles the
  /// approval, wakes the waiting run. Errors: not_found, conflict (no longer pending), forbidden
  /// (the requester itself, or a role too low).
  virtual void decide(std::string approval_id, approval_vote vote,
                      std::function<void(expected<approval>)> done) = 0;
  /// Forks the finished goal run `req.run_id` (docs/fork.md): a new run on this node that starts
  /// with its steps 1..from_step−1 (the edits applied) and goes on live. Errors: not_found (no
  /// such run), conflict (not ended, not a goal run), invalid_argument naming the field (a step
  /// that is not one of the run's, a bad edit, a policy that does not load).
  virtual void fork(journal::fork_request req,
                    std::function<void(expected<submit_reply>)> done) = 0;
  /// A person's message to a run (docs/conversation.md): committed (once per idempotency key),
  /// then taken into the run at its next decision; a question is answered from the run's
  /// journal at once (live or ended). `m` carries run_id, author, text and the idempotency key.
  /// Errors: not_found (no such run), conflict (the run was cancelled, or has ended and it is no
  /// question), too_many (the run has max_messages_per_run), invalid_argument / too_large (text).
  virtual void say(conversation::message m, std::function<void(expected<say_reply>)> done) = 0;
  [[nodiscard]] virtual kernel_stats stats() const = 0;
  /// False until recovery at start has finished, and while the store is unavailable.
  [[nodiscard]] virtual bool ready() const = 0;
  /// The members of the cluster and what this node knows of them (one node when standalone).
  [[nodiscard]] virtual cluster_view cluster() const = 0;
};

} // namespace sreh::actors
