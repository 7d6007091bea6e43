#include "actors/works/forward.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "actors/cluster/peer.hpp"

namespace sreh::actors {

namespace {

/// A forwarded command waits this long for the owner (which commits before it answers).
constexpr auto forward_timeout = std::chrono::seconds{30};

work_reply retry_later(std::string message) {
  return work_reply{{errc::unavailable, std::move(message)}, {}, false};
}

/// Answers with the Work as the store has it now (the owner committed before it answered).
void answer_with_work(orchestrator_impl_actor::pointer self, pending_calls& calls,
                      const works_env& env, const std::string& id,
                      std::function<void(work_reply)> deliver) {
  read_store(
    orchestrator_impl_actor{self}, calls, env.rt->store, env.rt->store_pool,
    [id](persistence::store& s) { return s.get_work(id); },
    [id, deliver = std::move(deliver)](expected<std::optional<works::work>> w) {
      if (!w)
        return deliver(work_reply{w.error(), {}, false});
      if (!*w)
        return deliver(work_reply{{errc::not_found, "work " + id + " not found"}, {}, false});
      deliver(work_reply{{}, std::move(**w), false});
    });
}

void forward_to(orchestrator_impl_actor::pointer self, pending_calls& calls, const works_env& env,
                const std::string& owner, caf::actor peer, forwarded_command cmd,
                std::function<void(work_reply)> deliver) {
  auto id = cmd.id;
  self
    ->request(peer, forward_timeout, forward_atom::value, std::move(cmd.id), cmd.c,
              std::move(cmd.by), std::move(cmd.text))
    .then(
      [self, &calls, &env, id, deliver](forwarded_reply& r) {
        if (r.err)
          return deliver(work_reply{r.err, {}, false});
        answer_with_work(self, calls, env, id, deliver);
      },
      [self, id, owner, deliver](caf::error& err) {
        deliver(retry_later(fmt::format("work {}: forwarding the command to its owner, node "
                                        "'{}', failed: {}; retry shortly",
                                        id, owner, self->system().render(err))));
      });
}

} // namespace

void answer_forwarded(orchestrator_impl_actor::pointer self,
                      std::function<void(std::function<void(expected<work_actor>)>)> lookup,
                      caf::typed_response_promise<forwarded_reply> rp, forwarded_command cmd) {
  lookup([self, rp, cmd = std::move(cmd)](expected<work_actor> a) mutable {
    if (!a) {
      rp.deliver(forwarded_reply{a.error()});
      return;
    }
    self->request(*a, caf::infinite, command_atom::value, cmd.c, cmd.by, cmd.text)
      .then([rp](work_reply& r) mutable { rp.deliver(forwarded_reply{r.err}); },
            [self, rp, id = cmd.id](caf::error& err) mutable {
              rp.deliver(forwarded_reply{
                {errc::internal, fmt::format("work {}: its actor died on the command: "
                                             "{}",
                                             id, self->system().render(err))}});
            });
  });
}

void command_elsewhere(orchestrator_impl_actor::pointer self, pending_calls& calls,
                       const works_env& env, const std::string& owner, forwarded_command cmd,
                       std::function<void(work_reply)> deliver,
                       std::function<void(std::vector<std::string> claimed)> run_here) {
  const auto& routing = *env.routing;
  if (routing.alive(owner)) {
    if (auto peer = routing.peer(owner))
      return forward_to(self, calls, env, owner, std::move(peer), std::move(cmd),
                        std::move(deliver));
    return deliver(retry_later(fmt::format("work {} is owned by node '{}', which is not linked "
                                           "to this node now; retry shortly (it is claimed "
                                           "when the owner's lease runs out)",
                                           cmd.id, owner)));
  }
  // The owner's lease ran out: claim its Works now rather than at the next heartbeat.
  call_blocking(
    orchestrator_impl_actor{self}, calls, env.rt->store_pool,
    [claim = routing.claim] { return claim(); },
    [self, id = cmd.id, owner, deliver = std::move(deliver),
     run_here = std::move(run_here)](expected<std::vector<std::string>> ids) {
      if (!ids)
        return deliver(retry_later(fmt::format("work {}: its owner, node '{}', is dead and "
                                               "claiming its Works failed: {}",
                                               id, owner, ids.error().message)));
      for (const auto& w : *ids) // each is this node's now: its timer, its run, as a heartbeat's
        self->send(self, adopt_atom::value, w);
      if (std::find(ids->begin(), ids->end(), id) == ids->end())
        return deliver(retry_later(fmt::format("work {}: its owner, node '{}', is dead and "
                                               "another member is taking its Works over; "
                                               "retry shortly",
                                               id, owner)));
      run_here(std::move(*ids));
    });
}

} // namespace sreh::actors
