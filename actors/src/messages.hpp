#pragma once
// Atoms, message types and typed interfaces shared by the actors of this module. Private: the
// module's public headers are CAF-free facades.

#include <caf/all.hpp>

#include <cstdint>
#include <string>

#include "sreh/core/goal.hpp"
#include "sreh/core/run.hpp"

namespace sreh {

// inspect() overloads live in the namespace of their type (ADL).
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, run_budget& x) {
  return f(caf::meta::type_name("sreh::run_budget"), x.max_steps, x.max_tokens, x.deadline_us,
           x.max_result_bytes);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, goal_request& x) {
  return f(caf::meta::type_name("sreh::goal_request"), x.goal, x.idempotency_key, x.submitter,
           x.labels, x.budget);
}

} // namespace sreh

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

/// Reply of the kernel to submit and cancel: errors travel as values (code + message) so that
/// the facade can hand them to non-actor callers unchanged.
struct kernel_reply {
  int code = 0;                // sreh::errc
  std::string message;
  std::string run_id;
  bool created = false;
  int state = 0;               // sreh::run_state after a cancel
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, kernel_reply& x) {
  return f(caf::meta::type_name("sreh::kernel_reply"), x.code, x.message, x.run_id, x.created,
           x.state);
}

/// The kernel's interface (also implemented by the supervisor, which forwards to the current
/// kernel incarnation).
using kernel_actor = caf::typed_actor<
  caf::replies_to<submit_atom, goal_request>::with<kernel_reply>,
  caf::replies_to<cancel_atom, std::string, std::string>::with<kernel_reply>>;

inline kernel_reply reply_error(errc c, std::string msg) {
  kernel_reply r;
  r.code = static_cast<int>(c);
  r.message = std::move(msg);
  return r;
}

} // namespace sreh::actors
