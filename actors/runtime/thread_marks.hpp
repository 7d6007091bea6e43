#pragma once

#include <caf/fwd.hpp>

namespace sreh::actors {

/// Makes the actor system configured with `cfg` mark its scheduler's worker threads and its
/// clock thread as threads that must not block (core/base/blocking.hpp), so that a store call
/// made from an actor's handler is caught at the store. Threads of detached actors may block
/// and stay unmarked. CAF 0.17.6 calls its thread hooks on every thread it starts and tells
/// them apart only by name: "caf.multiplexer" (workers, and the middleman's I/O loop, which must
/// not block either), "caf.clock", "caf.actor" (detached actors); tests/unit/kernel/
/// blocking_guard.cpp fails when a CAF upgrade changes that.
void mark_scheduler_threads(caf::actor_system_config& cfg);

} // namespace sreh::actors
