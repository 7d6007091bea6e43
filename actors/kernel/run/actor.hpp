#pragma once

#include <vector>

#include "actors/kernel/messages.hpp"
#include "actors/runtime/runtime.hpp"
#include "core/model/run.hpp"
#include "core/model/step.hpp"

namespace sreh::actors {

using retry_atom = caf::atom_constant<caf::atom("retry")>;
using step_timeout_atom = caf::atom_constant<caf::atom("steptmo")>;

/// One actor per active run. It owns the run's state while alive and follows the step protocol:
/// intent committed → side effect → outcome committed (the outcome of step N is committed
/// together with the intent of step N+1, or with the conclusion). It stops when the run ends or
/// starts waiting (passivation: the state then lives only in the store).
using run_actor = caf::typed_actor<
  caf::replies_to<create_atom>::with<kernel_reply>, caf::reacts_to<recover_atom>,
  caf::replies_to<cancel_atom, std::string, std::string>::with<kernel_reply>,
  caf::reacts_to<committed_atom, std::uint64_t, sreh::error, std::string>,
  caf::reacts_to<retry_atom, std::uint64_t>,
  caf::reacts_to<tool_done_atom, std::int64_t, bool, std::string, std::string>,
  caf::reacts_to<reconciled_atom, std::int64_t, reconcile_result::status, std::string>,
  caf::reacts_to<resume_atom, approval>, caf::reacts_to<timer_atom>,
  caf::reacts_to<called_atom, std::uint64_t>,
  caf::reacts_to<runs_atom, std::vector<flows::child_end>, bool>,
  caf::reacts_to<step_timeout_atom, std::int64_t>,
  caf::reacts_to<say_atom, std::vector<conversation::message>>>;

/// Spawns a run actor linked to `parent` for `r` (with the steps journaled so far). A new run
/// is then sent `create` (commits it, answers the submitter, starts it); a run found unfinished
/// in the store is sent `recover`.
/// A run that parks on an approval tells `kernel` (parked_atom: run id, approval id, expiry) and
/// stops; `resume` (with the settled approval) wakes a respawned actor. Its store reads (the
/// history of rate limits) run on the store pool and come back as `called` (blocking_call.hpp).
run_actor spawn_run(caf::local_actor* parent, kernel_impl_actor kernel, runtime_ptr rt, run r,
                    std::vector<step> steps);

} // namespace sreh::actors
