#pragma once
// Blocking work of an actor (a store read) runs on a blocking pool and continues in the actor,
// as the handling of a message. Private to the actors layer (CAF).

#include <caf/all.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>

#include "actors/runtime/blocking_pool.hpp"
#include "persistence/store/commit_queue.hpp"
#include "persistence/store/store.hpp"

namespace sreh::actors {

/// Sent by a blocking pool to the actor whose call is done: (called_atom, token).
using called_atom = caf::atom_constant<caf::atom("called")>;

/// The continuations of an actor's blocking calls in flight, by token. Part of the actor's
/// state; used only from the actor. A map (not a hash table, whose buckets never shrink): a
/// kernel may have many calls in flight at once (runs parking in a burst) and few afterwards.
class pending_calls {
 public:
  std::uint64_t add(std::function<void()> k) {
    auto token = ++last_;
    calls_.emplace_hint(calls_.end(), token, std::move(k)); // tokens only grow
    return token;
  }
  /// Runs the continuation of `token` and forgets it (it may start further calls).
  void complete(std::uint64_t token) {
    auto i = calls_.find(token);
    if (i == calls_.end())
      return;
    auto k = std::move(i->second);
    calls_.erase(i);
    k();
  }
  [[nodiscard]] std::size_t size() const { return calls_.size(); }

 private:
  std::uint64_t last_ = 0;
  std::map<std::uint64_t, std::function<void()>> calls_;
};

/// Runs `call` (which may block: a store read) on `pool`, then `then(result)` in the actor
/// `self` when it handles (called_atom, token), which its behavior hands to `calls.complete`:
/// `then` sees the actor's state as it is then and never runs on the pool's thread. The result
/// travels in a cell that the pool fills before it sends the message and the actor reads after
/// it received it (the mailbox orders the two). An actor gone by then drops both. Calls of one
/// actor may complete in any order when the pool has several threads.
template <class Handle, class Call, class Then>
void call_blocking(Handle self, pending_calls& calls, blocking_pool& pool, Call call, Then then) {
  using result = std::invoke_result_t<Call&>;
  auto cell = std::make_shared<std::optional<result>>();
  auto token = calls.add([cell, then = std::move(then)]() mutable { then(std::move(**cell)); });
  pool.post([self = std::move(self), cell, call = std::move(call), token]() mutable {
    cell->emplace(call());
    caf::anon_send(self, called_atom::value, token);
  });
}

/// Runs `read(store)` on `pool` (it blocks: the actors' store pool) and `then(result)` in the
/// actor `self`, as call_blocking does. `store` and `pool` outlive the actor (the runtime's).
template <class Handle, class Read, class Then>
void read_store(Handle self, pending_calls& calls, persistence::store& store, blocking_pool& pool,
                Read read, Then then) {
  call_blocking(
    std::move(self), calls, pool,
    [&store, read = std::move(read)]() mutable { return read(store); }, std::move(then));
}

/// Submits `b` through the group-commit `writer`, then `then(result)` in the actor `self` when
/// it handles (called_atom, token), as call_blocking does: the writer's callback plays the
/// pool's part (it fills the cell and sends the message).
template <class Handle, class Then>
void commit_batch(Handle self, pending_calls& calls, persistence::commit_queue& writer,
                  persistence::write_batch b, Then then) {
  auto cell = std::make_shared<persistence::commit_result>();
  auto token = calls.add([cell, then = std::move(then)]() mutable { then(std::move(*cell)); });
  writer.submit(std::move(b), [self = std::move(self), token, cell](persistence::commit_result r) {
    *cell = std::move(r);
    caf::anon_send(self, called_atom::value, token);
  });
}

} // namespace sreh::actors
