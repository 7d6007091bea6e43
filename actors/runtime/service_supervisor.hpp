#pragma once
// The supervisor of a node's services (the HTTP front, the relay). Private to actors/ and the
// tests: it includes CAF; net/ sees only actors::service and node::supervise.

#include <caf/all.hpp>

#include <future>
#include <memory>

#include "actors/runtime/supervision.hpp"
#include "core/base/logger.hpp"

namespace sreh::actors {

/// A service handed to the supervisor, with the promise its first start answers. A local
/// message only (it carries pointers).
struct service_spec {
  service_ptr svc;
  restart_policy policy;
  std::shared_ptr<std::promise<sreh::error>> started;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, service_spec& x) {
  return f(caf::meta::type_name("sreh::service_spec"), x.policy.max_restarts);
}

using supervise_atom = caf::atom_constant<caf::atom("supervise")>;

using service_supervisor_actor = caf::typed_actor<caf::reacts_to<supervise_atom, service_spec>>;

/// Spawns the supervisor of services. Each service runs in a detached child actor of its own
/// (its start and stop block), linked to the supervisor; an incarnation ends when the service
/// reports a failure (the child stops it) or when its start fails. A child that dies is started
/// again after the backoff of its restart_policy; one that exhausts its budget is left `failed`
/// (logged critical; the node is then not ready). A service whose *first* start fails is not
/// supervised: supervise() returns the error. Every change is written to `table` (children of
/// "services"), which must outlive the actor.
///
/// An exit message from anyone but a child (user_shutdown) stops the children one at a time,
/// the newest first, then the supervisor quits: stop_services() waits for that.
[[nodiscard]] service_supervisor_actor spawn_service_supervisor(caf::actor_system& sys,
                                                                supervision_table& table);

/// Hands `svc` to the supervisor and waits for its first start: its error, or another service of
/// the same name (`conflict`). Blocks: never call it from an actor.
[[nodiscard]] sreh::error supervise(const service_supervisor_actor& sup, service_ptr svc,
                                    restart_policy policy = {});

/// Stops every service (the newest first) and the supervisor, and waits for them. Blocks.
void stop_services(caf::actor_system& sys, const service_supervisor_actor& sup);

} // namespace sreh::actors
