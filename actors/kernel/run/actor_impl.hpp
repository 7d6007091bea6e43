#pragma once
// The run actor's state and the steps of its protocol, shared by run/actor.cpp (the step
// protocol, recovery, approvals) and run/verify.cpp (post-conditions, timers, compensation).
// Private to the actors module; every function runs in the run actor.

#include <functional>
#include <memory>
#include <optional>
#include <stop_token>

#include "actors/kernel/run/actor.hpp"
#include "actors/kernel/run/journal.hpp"
#include "core/conversation/steering.hpp"

namespace sreh::actors::run_impl {

/// What to do once the pending commit is acknowledged.
enum class after_commit {
  nothing,
  created,
  execute,
  advance,
  finish,
  park,
  park_timer,
  start_runs, // a flow step's runs: submit them (run/flow.cpp)
  park_runs,  // then wait for them
};

/// A flow run's pinned definition, read from the run's spec once per actor (run/flow.cpp).
struct flow_state;
} // namespace sreh::actors::run_impl
namespace sreh::llm {
class prior_steps_cache;
}
namespace sreh::actors {
struct reason_request;
}
namespace sreh::actors::run_impl {

struct run_state_t {
  runtime_ptr rt;
  kernel_impl_actor kernel;
  std::string parked_on; // approval id the run waits for
  run_journal journal;
  after_commit next = after_commit::nothing;
  std::uint64_t commits = 0;                    // tokens handed out
  std::uint64_t awaited = 0;                    // commit token we wait for (0 = none)
  std::vector<std::int64_t> in_flight_outcomes; // steps whose outcome the commit carries
  int commit_failures = 0;
  std::stop_source cancel;
  /// The in-flight tool call's own stop: the run's cancellation, or its step's timeout (a flow
  /// step's `timeout`; `timed_out` is then its number).
  std::stop_source step_stop;
  std::optional<std::stop_callback<std::function<void()>>> step_link;
  std::int64_t timed_out = 0;
  std::optional<std::stop_callback<std::function<void()>>> on_shutdown; // node stop → cancel
  std::string cancelled_by;
  std::vector<caf::typed_response_promise<kernel_reply>> cancel_waiters;
  caf::typed_response_promise<kernel_reply> creator; // the submitter, answered after the create
  std::string existing_run_id;                       // the create met this idempotency key
  run_memory_ptr model_memory;      // the provider's, between decisions (see run_memory)
  pending_calls calls;              // store reads and checks in flight
  std::shared_ptr<flow_state> flow; // a flow run's definition, once read
  /// The request a reason step journaled (its hash and context report), kept for the model
  /// call that follows the step's commit, so a turn assembles its context once; `prepared_for`
  /// is that step's number (a recovered step assembles it again).
  std::shared_ptr<reason_request> prepared;
  std::int64_t prepared_for = 0;
  std::shared_ptr<llm::prior_steps_cache> prior_steps; // the journal as its model saw it
  bool lease_waiting = false; // a step waits for this node's lease (run/actor.cpp)
  bool recalled = false;      // this actor asked memory already (run/recall.cpp)
  /// A fork's own policy (docs/fork.md), or the policy version the run pinned (docs/evolve.md),
  /// loaded from its spec once per actor; null: the node's.
  std::shared_ptr<const policy::policy_set> own_policy;
  std::string own_policy_error; // that policy cannot be had: the run's next action fails
  /// The provider of the versions the run pinned when it began (actors/evolve/versions.hpp).
  model_provider_ptr provider;
  std::string provider_error; // a pinned version this node does not have: the run fails
  /// People's messages delivered and not yet taken, by seq (run/conversation.cpp).
  std::vector<conversation::message> inbox;
  /// The run's policy with the constraints its messages set as rules; null while there are none.
  std::shared_ptr<const policy::policy_set> constrained_policy;
  /// The pause its messages put the run in ("pause" until "resume"): it decides nothing more.
  std::optional<conversation::directive> pause;
  bool holding = false; // paused and idle: a message or a cancel wakes it (run/conversation.cpp)
  static inline const char* name = "sreh.run";

  run_state_t() = default;
  run_state_t(const run_state_t&) = delete;
  run_state_t& operator=(const run_state_t&) = delete;
  /// Answers whoever still waits on the actor when it stops without having answered them (it
  /// died, or the kernel did and took it along): CAF 0.17 drops such a promise silently, and the
  /// submitter would wait for its timeout.
  ~run_state_t();
};

using self_ptr = run_actor::stateful_pointer<run_state_t>;

/// The policy that decides on the run's actions: a fork's own or the pinned one, else the node's.
[[nodiscard]] inline const policy::policy_set& policy_of(const run_state_t& st) {
  if (st.constrained_policy)
    return *st.constrained_policy;
  return st.own_policy ? *st.own_policy : st.rt->policy;
}

/// Loads a fork's own policy and the versions the run pinned into `st` (run/versions.cpp); a
/// version that cannot be had is left in own_policy_error / provider_error.
void load_run_versions(run_state_t& st);

/// The provider that decides the run's next step: that of its pinned versions.
[[nodiscard]] inline model_provider& provider_of(const run_state_t& st) {
  return st.provider ? *st.provider : *st.rt->provider;
}

/// Journals what changed and commits; `next` says what to do once it is durable.
void commit(self_ptr self, after_commit next);
void advance(self_ptr self);
/// Journals the intent of a tool call with the policy's decision on it (see run/actor.cpp).
void propose(self_ptr self, const decision& d);
void execute(self_ptr self);
/// Rebuilds the run from its journal after a restart and goes on (run/recover.cpp).
void recover(self_ptr self);
/// A tool call of step `n` returned (or failed): journal its outcome and go on (actor.cpp).
void on_tool_done(self_ptr self, std::int64_t n, bool ok, std::string result, std::string err);
void on_reconciled(self_ptr self, std::int64_t n, reconcile_result::status status,
                   std::string result);
/// Runs `call` (it blocks) on `pool`, then `then(result)` in the run actor.
template <class Call, class Then>
void call_on(self_ptr self, blocking_pool& pool, Call call, Then then) {
  call_blocking(run_actor{self}, self->state.calls, pool, std::move(call), std::move(then));
}

void finish(self_ptr self, run_state final_state, std::string message);
void fail(self_ptr self, std::string why);

// -- run/flow.cpp (flow runs: docs/flows.md) ------------------------------------------------------

/// `advance` for a flow run: the flow's next action, journaled.
void advance_flow(self_ptr self);
/// The last step's runs are journaled: submit them to the kernel, then park on them.
void start_runs(self_ptr self);
/// The runs the last step started are over, or its timeout passed.
void on_runs_joined(self_ptr self, const std::vector<flows::child_end>& ends, bool timed_out);

// -- run/recall.cpp -------------------------------------------------------------------------------

/// Whether the run recalls before its first step: a goal run with no steps whose actor has not
/// asked yet, on a node that recalls (`memory.recall`).
[[nodiscard]] bool wants_recall(self_ptr self);
/// Asks long-term memory for the run's goal and labels; journals what it found as the run's
/// first step and commits it, then goes on (`advance`) either way.
void recall(self_ptr self);

// -- run/conversation.cpp ------------------------------------------------------------------------

/// The entities (name, kind) the run's tool results described so far.
[[nodiscard]] std::vector<conversation::known_entity> known_entities(const std::vector<step>& steps,
                                                                     const tool_registry& tools);
/// Rebuilds what the run's message steps ask of it: the constrained policy and the pause.
void refresh_steering(run_state_t& st);
/// The run is paused: it waits, idle, for its next message or a cancel.
void hold(self_ptr self);
/// A message or a cancel reached a holding run: it decides again.
void wake(self_ptr self);
/// Messages delivered to the actor: kept (once each, in seq order) until the next decision.
void on_messages(self_ptr self, std::vector<conversation::message> ms);
/// A message's event on its run's stream (`run.message`): not of the run's own event sequence
/// (run_seq 0), which its actor keeps.
[[nodiscard]] event message_event(const runtime& rt, const conversation::message& m);
/// Journals the kept messages as message steps and commits; "stop" ends the run.
void take_messages(self_ptr self);

// -- run/verify.cpp -----------------------------------------------------------------------------

/// After a successful step: checks the tool's post-condition (now, or after a durable timer)
/// and compensates when it does not hold; else goes on with the next step.
void after_success(self_ptr self, std::int64_t n);
/// The durable timer of step n fired (the run was respawned for it).
void on_timer_fired(self_ptr self);

// -- run/reason.cpp ------------------------------------------------------------------------------

/// The next step of a run driven by a language model: a reason step's intent, the model call
/// it journals, or the next tool call of a recorded response (called by advance()).
void reason(self_ptr self, llm_provider& llm);
/// Ends the run (run/actor.cpp): journals the final state and commits.
void finish(self_ptr self, run_state final_state, std::string message);
void fail(self_ptr self, std::string why);

} // namespace sreh::actors::run_impl
