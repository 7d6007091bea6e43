#pragma once
// The kernel actor's state and the operations its two files (kernel.cpp: run lifecycle,
// kernel_parked.cpp: parked runs and approvals) share. Private to the kernel.

#include <deque>
#include <functional>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "actors/kernel/kernel.hpp"
#include "actors/kernel/run_actor.hpp"

namespace sreh::actors {

struct kernel_state {
  runtime_ptr rt;
  std::unordered_map<std::string, run_actor> runs;          // active runs
  std::unordered_map<caf::actor_addr, std::string> ids_by_addr;
  std::unordered_map<std::string, int> crashes;             // per run, to stop a crash loop
  /// Commits the kernel itself waits for, by token: their continuation.
  std::unordered_map<std::uint64_t, std::function<void(const sreh::error&)>> pending;
  std::uint64_t tokens = 0;
  /// Writes to a parked run (votes, timeouts, cancellation) run one at a time per run.
  std::unordered_set<std::string> busy_runs;
  std::unordered_map<std::string, std::deque<std::function<void()>>> queued;
  /// Deadlines: approval expiries (approval id) and durable run timers (run id), and the
  /// wake-up currently armed.
  std::multimap<timestamp_us, std::string> timers;
  timestamp_us armed = 0;
  static inline const char* name = "sreh.kernel";
};

using kernel_self = kernel_impl_actor::stateful_pointer<kernel_state>;

/// Spawns the actor of run `r` and registers it.
run_actor activate(kernel_self self, run r, std::vector<step> steps);

/// Submits a batch through the group-commit writer; `then` runs in the kernel after the commit.
void kernel_commit(kernel_self self, persistence::write_batch b,
                   std::function<void(const sreh::error&)> then);

/// An event of run `r` written by the kernel while the run has no actor: takes the next run_seq
/// from the run's checkpoint and advances it (the caller writes `r` in the same batch).
event parked_event(const runtime& rt, run& r, const char* kind, std::string data);

// -- parked runs (kernel_parked.cpp) -------------------------------------------------------

/// At start: timers for pending approvals of waiting runs; runs whose approval settled while
/// the node was down are resumed.
void recover_parked(kernel_self self, const run& r);
/// A run parked: on an approval (its deadline is armed), or on a durable timer (approval_id
/// empty, `until` the time to wake it).
void on_parked(kernel_self self, const std::string& run_id, const std::string& approval_id,
               timestamp_us until);
caf::result<kernel_reply> decide(kernel_self self, const std::string& approval_id,
                                 const approval_vote& vote);
caf::result<kernel_reply> cancel_parked(kernel_self self, const std::string& run_id,
                                        const std::string& by);
void on_timer(kernel_self self);

} // namespace sreh::actors
