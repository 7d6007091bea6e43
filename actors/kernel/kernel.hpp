#pragma once

#include "actors/kernel/messages.hpp"
#include "actors/runtime/runtime.hpp"

namespace sreh::actors {

/// The kernel: creates runs (durably, before answering), owns the registry of run actors
/// (linked; a run actor that crashes is recovered from the store), recovers unfinished runs at
/// start, cancels runs whether active or passivated, and settles approvals (votes, timeouts,
/// escalation) for parked runs, waking them when decided. Its interface is kernel_impl_actor
/// (messages.hpp).
kernel_impl_actor spawn_kernel(caf::local_actor* parent, runtime_ptr rt);

/// The node's root supervisor: spawns the kernel linked, restarts it with backoff when it dies
/// (at most `max_restarts` within a minute, then gives up and quits with an error), and forwards
/// every request to the current kernel incarnation.
kernel_actor spawn_supervisor(caf::actor_system& sys, runtime_ptr rt, int max_restarts = 5);

} // namespace sreh::actors
