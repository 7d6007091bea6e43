#pragma once

#include "messages.hpp"
#include "runtime.hpp"

namespace sreh::actors {

using kernel_committed_atom = caf::atom_constant<caf::atom("kcommitted")>;

/// The kernel: creates runs (durably, before answering), owns the registry of run actors
/// (linked; a run actor that crashes is recovered from the store), recovers unfinished runs at
/// start, and cancels runs whether active or passivated.
using kernel_impl_actor = kernel_actor::extend<
  caf::reacts_to<kernel_committed_atom, std::uint64_t, int, std::string, std::string>>;

kernel_impl_actor spawn_kernel(caf::local_actor* parent, runtime_ptr rt);

/// The node's root supervisor: spawns the kernel linked, restarts it with backoff when it dies
/// (at most `max_restarts` within a minute, then gives up and quits with an error), and forwards
/// every request to the current kernel incarnation.
kernel_actor spawn_supervisor(caf::actor_system& sys, runtime_ptr rt, int max_restarts = 5);

} // namespace sreh::actors
