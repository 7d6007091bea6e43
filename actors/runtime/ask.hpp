#pragma once
// Requests to an actor from a non-actor thread (the facades of the kernel and the Works control
// plane): the reply, or the error, reaches a callback on an actor thread.

#include <caf/all.hpp>
#include <fmt/format.h>

#include <chrono>
#include <functional>

#include "core/base/status.hpp"

namespace sreh::actors {

/// Sends one request `xs...` to `target` (the supervisor, the orchestrator, or a peer's actor)
/// from a non-actor thread and hands the reply (or the error, in the reply's `err`) to `done`
/// on an actor thread.
template <class Reply, class Handle, class... Ts>
void ask_for(caf::actor_system& sys, Handle target, std::function<void(const Reply&)> done,
             Ts... xs) {
  sys.spawn([target, done = std::move(done), xs...](caf::event_based_actor* self) {
    self->request(target, std::chrono::seconds(30), xs...)
      .then(
        [done](const Reply& rep) { done(rep); },
        [done, self](const caf::error& err) {
          Reply rep;
          rep.err = {errc::unavailable, fmt::format("no answer: {}", self->system().render(err))};
          done(rep);
        });
  });
}

} // namespace sreh::actors
