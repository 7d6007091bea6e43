#pragma once
// The kernel actor's state and the operations its two files (kernel.cpp: run lifecycle,
// kernel_parked.cpp: parked runs and approvals) share. Private to the kernel.
//
// The kernel never calls the store itself: its reads run on the store pool and continue here as
// messages (read_store), its writes go through the group-commit writer (kernel_commit). While
// one is in flight other messages are handled; what must not interleave is ordered by
// `with_run` (one kernel operation at a time per run) and, at start, by `recovering`.

#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "actors/kernel/kernel.hpp"
#include "actors/kernel/run/actor.hpp"

namespace sreh::actors {

struct kernel_state {
  runtime_ptr rt;
  std::unordered_map<std::string, run_actor> runs; // active runs
  std::unordered_map<caf::actor_addr, std::string> ids_by_addr;
  std::unordered_map<std::string, int> crashes; // per run, to stop a crash loop
  /// Store reads and commits the kernel waits for: their continuations.
  pending_calls calls;
  /// Until the recovery at start is done, requests wait in the mailbox (skipped), as they did
  /// when recovery ran before the first message.
  bool recovering = true;
  /// Operations on a run (votes, timeouts, cancellation of a parked run, waking it, recovering
  /// it) run one at a time per run.
  std::unordered_set<std::string> busy_runs;
  std::unordered_map<std::string, std::deque<std::function<void()>>> queued;
  /// Deadlines: approval expiries (approval id) and durable run timers (run id), and the
  /// wake-up currently armed.
  std::multimap<timestamp_us, std::string> timers;
  timestamp_us armed = 0;
  /// Messages committed for runs that have no actor now, by run: handed to the actor the run is
  /// next woken in (kernel_messages.cpp).
  std::unordered_map<std::string, std::vector<conversation::message>> inbox;
  static inline const char* name = "sreh.kernel";
};

using kernel_self = kernel_impl_actor::stateful_pointer<kernel_state>;

/// Runs `read(store)` on the store pool (it blocks) and `then(result)` in the kernel.
template <class Read, class Then>
void read_store(kernel_self self, Read read, Then then) {
  auto& rt = *self->state.rt;
  actors::read_store(kernel_impl_actor{self}, self->state.calls, rt.store, rt.store_pool,
                     std::move(read), std::move(then));
}

/// Spawns the actor of run `r` and registers it.
run_actor activate(kernel_self self, run r, std::vector<step> steps);

/// Submits a batch through the group-commit writer; `then` runs in the kernel after the commit.
void kernel_commit(kernel_self self, persistence::write_batch b,
                   std::function<void(const sreh::error&)> then);

/// An event of run `r` written by the kernel while the run has no actor: takes the next run_seq
/// from the run's checkpoint and advances it (the caller writes `r` in the same batch).
event parked_event(const runtime& rt, run& r, const char* kind, std::string data);

/// Runs `op` once no other kernel operation on run `run_id` is in flight; `op` must end by
/// calling release_run for the same run (after its reads and commits).
void with_run(kernel_self self, const std::string& run_id, std::function<void()> op);
void release_run(kernel_self self, const std::string& run_id);

/// Admission of a new run: `unavailable` while commits queue for the store beyond
/// limits.max_commit_backlog (kernel.cpp).
[[nodiscard]] sreh::error admission(const runtime& rt);

/// Forks a finished goal run into a new one (kernel_fork.cpp).
caf::result<kernel_reply> fork_run(kernel_self self, journal::fork_request& req);

// -- recovery ----------------------------------------------------------------------------------

/// What the recovery of one unfinished run needs from the store.
struct recovery_item {
  run r;
  sreh::error err;                         // reading the steps failed
  std::vector<step> steps;                 // pending, running; waiting on a settled approval
  std::optional<approval> parked_on;       // waiting on an approval: its approval, if found
  std::optional<timestamp_us> timer_until; // waiting on a timer: its deadline, if found
};

/// Reads what the recovery of `r` needs. Blocking: on the store pool.
[[nodiscard]] recovery_item load_recovery(persistence::store& s, run r);

/// Resumes a pending or running run (the steps are in `item`); false when they could not be read.
bool recover_active(kernel_self self, recovery_item& item);

// -- people's messages to runs (kernel_messages.cpp) -----------------------------------------

/// A person's message to a run: checked, committed, delivered (docs/conversation.md).
caf::result<kernel_reply> say(kernel_self self, conversation::message m);
/// Hands the inbox of `run_id` to its new actor `a` (activate).
void hand_inbox(kernel_self self, const std::string& run_id, const run_actor& a);
/// At start: the messages committed and not taken, into the inbox; then `then`.
void load_inbox(kernel_self self, std::function<void()> then);
/// After recovery: the runs still parked with messages waiting are checked for withdrawals.
void consider_inbox(kernel_self self);
/// Wakes a parked run with its withdrawn approval `a` (kernel_parked.cpp); `then` ends the
/// caller's operation on the run.
void withdraw_parked(kernel_self self, run r, approval a, std::function<void()> then);

// -- parked runs (kernel_parked.cpp) -------------------------------------------------------

/// At start (or when a run is adopted): timers for pending approvals of waiting runs and for
/// their durable timers; runs whose approval settled while the node was down are resumed.
void recover_parked(kernel_self self, recovery_item& item);
/// Respawns a run whose durable timer fired (kernel_runs.cpp); the operation on the run ends
/// when it is awake.
void wake_run(kernel_self self, const std::string& run_id);
/// A run parked: on an approval (its deadline is armed), or on a durable timer (approval_id
/// empty, `until` the time to wake it).
void on_parked(kernel_self self, const std::string& run_id, const std::string& approval_id,
               timestamp_us until);
caf::result<kernel_reply> decide(kernel_self self, const std::string& approval_id,
                                 const approval_vote& vote);
caf::result<kernel_reply> cancel_parked(kernel_self self, const std::string& run_id,
                                        const std::string& by);
/// Cancels run `run_id` as the store has it (parked, or with no actor here) and answers `rp`.
void cancel_stored(kernel_self self, const std::string& run_id, const std::string& by,
                   caf::typed_response_promise<kernel_reply> rp);
void on_timer(kernel_self self);
/// Arms the kernel's wake-up for the earliest deadline of `timers`.
void arm_timer(kernel_self self);

// -- flow runs waiting for their runs (kernel_runs.cpp) -----------------------------------------

/// A flow run's actor parked it on the runs its last step started.
void on_await(kernel_self self, const std::string& run_id);
/// Wakes flow run `run_id` when the runs it waits for have a decided join (or, `timed_out`, when
/// its step's timeout has passed); `arm`: else arm that timeout.
void check_runs(kernel_self self, const std::string& run_id, bool timed_out, bool arm);
/// Cancels the runs the last step of (cancelled) flow run `run_id` started.
void cancel_runs_of(kernel_self self, const std::string& run_id, const std::string& by);

} // namespace sreh::actors
