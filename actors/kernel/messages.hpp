#pragma once
// Atoms, message types and typed interfaces shared by the actors of this module. Private: the
// module's public headers are CAF-free facades.

#include <caf/all.hpp>

#include <cstdint>
#include <string>

#include "actors/runtime/blocking_call.hpp"
#include "core/base/status.hpp"
#include "core/conversation/message.hpp"
#include "core/flows/runner.hpp"
#include "core/journal/fork.hpp"
#include "core/model/approval.hpp"
#include "core/model/goal.hpp"
#include "core/model/run.hpp"

namespace sreh {

// inspect() overloads live in the namespace of their type (ADL).
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, run_budget& x) {
  return f(caf::meta::type_name("sreh::run_budget"), x.max_steps, x.max_tokens, x.deadline_us,
           x.max_result_bytes);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, approval_vote& x) {
  return f(caf::meta::type_name("sreh::approval_vote"), x.by, x.role, x.approve, x.comment, x.at);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, opening_message& x) {
  return f(caf::meta::type_name("sreh::opening_message"), x.author, x.text);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, goal_request& x) {
  return f(caf::meta::type_name("sreh::goal_request"), x.goal, x.idempotency_key, x.submitter,
           x.labels, x.budget, x.kind, x.parent, x.spec, x.opening);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, sreh::error& x) {
  return f(caf::meta::type_name("sreh::error"), x.code, x.message);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, approval& x) {
  return f(caf::meta::type_name("sreh::approval"), x.id, x.run_id, x.step_n, x.kind, x.state,
           x.tool, x.args, x.rule_id, x.reason, x.required, x.roles, x.requester, x.votes,
           x.created_at, x.expires_at, x.on_timeout, x.escalate_to, x.escalated, x.decided_at);
}

} // namespace sreh

namespace sreh::flows {

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, child_end& x) {
  return f(caf::meta::type_name("sreh::flows::child_end"), x.key, x.run_id, x.state, x.conclusion,
           x.error);
}

} // namespace sreh::flows

namespace sreh::journal {

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, fork_edit& x) {
  return f(caf::meta::type_name("sreh::journal::fork_edit"), x.step, x.result, x.error);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, fork_request& x) {
  return f(caf::meta::type_name("sreh::journal::fork_request"), x.run_id, x.from_step, x.policy,
           x.edits, x.submitter);
}

} // namespace sreh::journal

namespace sreh::conversation {

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, message& x) {
  return f(caf::meta::type_name("sreh::conversation::message"), x.id, x.run_id, x.seq, x.author,
           x.kind, x.text, x.at, x.idempotency_key, x.taken_step);
}

} // namespace sreh::conversation

namespace sreh::actors {

using submit_atom = caf::atom_constant<caf::atom("submit")>;
using cancel_atom = caf::atom_constant<caf::atom("cancel")>;
using start_atom = caf::atom_constant<caf::atom("start")>;
using create_atom = caf::atom_constant<caf::atom("create")>;
using recover_atom = caf::atom_constant<caf::atom("recover")>;
using committed_atom = caf::atom_constant<caf::atom("committed")>;
using tool_done_atom = caf::atom_constant<caf::atom("tool_done")>;
using reconciled_atom = caf::atom_constant<caf::atom("reconciled")>;
using respawn_atom = caf::atom_constant<caf::atom("respawn")>;
using decide_atom = caf::atom_constant<caf::atom("decide")>;
using parked_atom = caf::atom_constant<caf::atom("parked")>;
using resume_atom = caf::atom_constant<caf::atom("resume")>;
using timer_atom = caf::atom_constant<caf::atom("timer")>;
using adopt_atom = caf::atom_constant<caf::atom("adopt")>; // a run claimed from a dead node
using load_atom = caf::atom_constant<caf::atom("load")>;   // a peer's load, pushed
using tick_atom = caf::atom_constant<caf::atom("tick")>;
using await_atom = caf::atom_constant<caf::atom("await")>; // a flow run parked on its runs
using ended_atom = caf::atom_constant<caf::atom("ended")>; // a run a flow run started ended
using runs_atom = caf::atom_constant<caf::atom("runs")>;   // those runs' join is decided
using fork_atom = caf::atom_constant<caf::atom("fork")>;   // a new run from a finished one's steps
using say_atom = caf::atom_constant<caf::atom("say")>;     // a person's message to a run

/// Reply of the kernel to submit, cancel and decide. Errors travel as values (they reach
/// non-actor callers through the facade unchanged, and cross nodes in a cluster).
struct kernel_reply {
  sreh::error err; // set: the request failed (the rest is unset)
  std::string run_id;
  bool created = false;                 // submit: false when the idempotency key named a run
  run_state state = run_state::pending; // submit: the new run's state; cancel: the final one
  approval decided;                     // decide: the approval as the vote left it
  conversation::message said;           // say: the message as committed (created: new)
  conversation::message answered;       // say: the agent's reply to it, when it was a question
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, kernel_reply& x) {
  return f(caf::meta::type_name("sreh::kernel_reply"), x.err, x.run_id, x.created, x.state,
           x.decided, x.said, x.answered);
}

/// The kernel's interface (also implemented by the supervisor, which forwards to the current
/// kernel incarnation).
using kernel_actor =
  caf::typed_actor<caf::replies_to<submit_atom, goal_request>::with<kernel_reply>,
                   caf::replies_to<cancel_atom, std::string, std::string>::with<kernel_reply>,
                   caf::replies_to<decide_atom, std::string, approval_vote>::with<kernel_reply>,
                   caf::replies_to<fork_atom, journal::fork_request>::with<kernel_reply>,
                   caf::replies_to<say_atom, conversation::message>::with<kernel_reply>,
                   caf::reacts_to<adopt_atom, std::string>>;

/// The kernel's full interface: the public one plus what its own actors and its blocking calls
/// (store reads, commits: actors/runtime/blocking_call.hpp) send.
using kernel_impl_actor =
  kernel_actor::extend<caf::reacts_to<called_atom, std::uint64_t>,
                       caf::reacts_to<parked_atom, std::string, std::string, std::int64_t>,
                       caf::reacts_to<timer_atom>, caf::reacts_to<await_atom, std::string>,
                       caf::reacts_to<ended_atom, std::string>>;

inline kernel_reply reply_error(errc c, std::string msg) {
  kernel_reply r;
  r.err = {c, std::move(msg)};
  return r;
}

} // namespace sreh::actors
