#pragma once
// Long-term memory's one way in (docs/memory.md): search ranked by core/memory over what the
// store's full-text engine finds, and every change — add, edit, rollback, delete — as the next
// version of its entry, committed through the node's commit queue with a `memory.*` event, so
// each change is in the audit chain with its author. A version that lost a race (someone else's
// change came first) is `conflict`, and nothing of it is applied.
//
// Every method blocks on the store (core/base/blocking.hpp): call it from the HTTP handler pool
// or a blocking pool, never from a CAF scheduler thread. Thread-safe.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/clock.hpp"
#include "core/base/expected.hpp"
#include "core/base/id.hpp"
#include "core/memory/memory.hpp"
#include "core/memory/search.hpp"
#include "persistence/store/commit_queue.hpp"
#include "persistence/store/memory_store.hpp"

namespace sreh::actors {

class memory_service {
 public:
  memory_service(persistence::memory_store& reads, persistence::commit_queue& writes,
                 const sreh::clock& clock, id_generator& ids);

  /// The best entries for `q`, best first; `invalid_argument` naming a bad parameter.
  [[nodiscard]] expected<std::vector<memory::hit>> search(const memory::query& q);
  /// The current version of `id` (a tombstone when deleted); `not_found` naming it.
  [[nodiscard]] expected<memory::entry> get(std::string_view id);
  /// Every version of `id`, newest first; `not_found` naming it.
  [[nodiscard]] expected<std::vector<memory::entry>> versions(std::string_view id);

  /// A new entry (version 1) by `author`.
  [[nodiscard]] expected<memory::entry> add(memory::draft d, std::string_view author);
  /// The next version of `id` with `p` applied.
  [[nodiscard]] expected<memory::entry> edit(std::string_view id, const memory::patch& p,
                                             std::string_view author);
  /// The next version of `id` with the text of its version `version`.
  [[nodiscard]] expected<memory::entry> rollback(std::string_view id, std::int64_t version,
                                                 std::string_view author);
  /// The tombstone of `id`.
  [[nodiscard]] expected<memory::entry> remove(std::string_view id, std::string_view author);

 private:
  /// Commits `e` with its `memory.*` event; waits for the commit.
  expected<memory::entry> commit(memory::entry e);

  persistence::memory_store& reads_;
  persistence::commit_queue& writes_;
  const sreh::clock& clock_;
  id_generator& ids_;
};

} // namespace sreh::actors
