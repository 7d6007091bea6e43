// The run actor's state: what it answers when the actor stops before answering.
#include "actors/kernel/run/actor_impl.hpp"

namespace sreh::actors::run_impl {

run_state_t::~run_state_t() {
  if (creator.pending())
    creator.deliver(reply_error(errc::unavailable,
                                "the run's actor stopped before it answered (it died, or the "
                                "kernel restarted): the run may not exist; submit again with the "
                                "same Idempotency-Key, which names the run if it does"));
  for (auto& p : cancel_waiters)
    if (p.pending())
      p.deliver(reply_error(errc::unavailable,
                            "the run's actor stopped before the cancel was applied; cancel again"));
}

} // namespace sreh::actors::run_impl
