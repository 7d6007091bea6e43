#pragma once
// Atoms, message types and typed interfaces of the Works actors: the orchestrator, one actor per
// active Work, and the world sync. Private to the actors layer (CAF).

#include <caf/all.hpp>

#include <cstdint>
#include <string>

#include "actors/cluster/peer.hpp"
#include "actors/kernel/messages.hpp"
#include "actors/works/works_api.hpp"

namespace sreh::works {

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, sla_marks& x) {
  return f(caf::meta::type_name("sreh::works::sla_marks"), x.created_at, x.acknowledged_at,
           x.mitigated_at, x.resolved_at);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, work& x) {
  return f(caf::meta::type_name("sreh::works::work"), x.id, x.template_name, x.template_version,
           x.kind, x.title, x.severity, x.state, x.fields, x.labels, x.creator, x.idempotency_key,
           x.node_id, x.created_at, x.updated_at, x.marks, x.runs, x.active_run, x.queued,
           x.triggers, x.sla_breached, x.holds_since, x.world_at, x.next_check, x.seq, x.alerts);
}

} // namespace sreh::works

namespace sreh::actors {

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, new_work& x) {
  return f(caf::meta::type_name("sreh::new_work"), x.template_name, x.fields, x.idempotency_key,
           x.creator, x.labels);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, work_reply& x) {
  return f(caf::meta::type_name("sreh::work_reply"), x.err, x.w, x.created);
}

using command_atom = caf::atom_constant<caf::atom("command")>;
using run_ended_atom = caf::atom_constant<caf::atom("run_ended")>;
using check_atom = caf::atom_constant<caf::atom("check")>;
using schedule_atom = caf::atom_constant<caf::atom("schedule")>;
using watch_run_atom = caf::atom_constant<caf::atom("watch_run")>;
using passivate_atom = caf::atom_constant<caf::atom("passivate")>;
using sweep_atom = caf::atom_constant<caf::atom("sweep")>;
using sync_atom = caf::atom_constant<caf::atom("sync")>;
using action_atom = caf::atom_constant<caf::atom("action")>;

/// The orchestrator: makes Works, routes commands and run ends to the actor of each Work
/// (activating a passivated one from the store), keeps the Works' durable timers, recovers open
/// Works at start and takes over those claimed from a dead member (adopt). Commands carry the
/// work_command as an int.
using orchestrator_actor =
  caf::typed_actor<caf::replies_to<create_atom, new_work>::with<work_reply>,
                   caf::replies_to<command_atom, std::string, std::int32_t, std::string,
                                   std::string>::with<work_reply>,
                   caf::replies_to<forward_atom, std::string, std::int32_t, std::string,
                                   std::string>::with<forwarded_reply>,
                   caf::reacts_to<run_ended_atom, std::string, std::string, std::string>,
                   caf::reacts_to<adopt_atom, std::string>>;

/// What the orchestrator's own actors and calls send it: (schedule, work id, next check) after
/// each commit of a Work, (watch_run, run id, work id) when a Work's run started.
using orchestrator_impl_actor =
  orchestrator_actor::extend<caf::reacts_to<called_atom, std::uint64_t>,
                             caf::reacts_to<schedule_atom, std::string, std::int64_t>,
                             caf::reacts_to<watch_run_atom, std::string, std::string>,
                             caf::reacts_to<timer_atom>, caf::reacts_to<sweep_atom>>;

/// The actor of one Work while it is active.
using work_actor = caf::typed_actor<
  caf::replies_to<command_atom, std::int32_t, std::string, std::string>::with<work_reply>,
  caf::reacts_to<start_atom>, caf::reacts_to<run_ended_atom, std::string, std::string, std::string>,
  caf::reacts_to<check_atom>, caf::reacts_to<passivate_atom>,
  caf::reacts_to<called_atom, std::uint64_t>>;

/// The world sync: observes the node's world sources every `works.world_sync_ms` and after
/// each mutating action (action, run id, step n, tool).
using world_sync_actor =
  caf::typed_actor<caf::reacts_to<sync_atom>,
                   caf::reacts_to<action_atom, std::string, std::int64_t, std::string>,
                   caf::reacts_to<called_atom, std::uint64_t>>;

} // namespace sreh::actors
