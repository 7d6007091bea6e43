#pragma once
// The in-memory store's contents (in_memory_store.cpp and the files of its aggregates): the
// tables, the event log and the undo log of a commit, and the lock its reads take. Private to
// persistence/store.

#include <fmt/format.h>

#include <map>
#include <mutex>
#include <string>
#include <type_traits>
#include <unordered_set>
#include <utility>
#include <vector>

#include "persistence/audit/audit.hpp"
#include "persistence/audit/audit_hasher.hpp"
#include "persistence/store/in_memory_candidates.hpp"
#include "persistence/store/in_memory_memories.hpp"
#include "persistence/store/in_memory_messages.hpp"
#include "persistence/store/in_memory_store.hpp"
#include "persistence/store/in_memory_undo.hpp"
#include "persistence/store/in_memory_works.hpp"
#include "persistence/store/notify_store.hpp"

namespace sreh::persistence {

namespace in_memory {

using step_key = std::pair<std::string, std::int64_t>; // (run_id, n)

/// An entry of the event log with its place in the audit chain.
struct chained_event {
  event e; // with its seq
  std::string prev_hash;
  std::string hash;
};

} // namespace in_memory

struct in_memory_store::contents {
  using step_key = in_memory::step_key;
  using chained_event = in_memory::chained_event;
  template <class K, class V>
  using undo_entries = in_memory::undo_entries<K, V>;

  /// What one commit changed, to put back when one of its batches fails.
  struct undo_log {
    undo_entries<std::string, run> runs;
    undo_entries<std::string, std::string> keys;
    undo_entries<step_key, step> steps;
    undo_entries<std::string, approval> approvals;
    std::size_t events = 0; // the log's length before the commit
  };

  mutable std::mutex mtx;
  // Everything below is guarded by mtx.
  sreh::error failure;
  std::map<std::string, run, std::less<>> runs;         // by id: lists page by id
  std::map<std::string, std::string, std::less<>> keys; // idempotency key -> run id
  std::map<step_key, step> steps;
  std::map<std::string, approval, std::less<>> approvals;
  std::vector<chained_event> events; // events[i].e.seq == i + 1
  std::unordered_set<std::string> event_ids;
  std::map<std::string, std::int64_t, std::less<>> relay_offsets;
  in_memory::work_tables works;           // undone with the rest (roll_back), kept after a commit
  in_memory::memory_tables memories;      // the same
  in_memory::candidate_tables candidates; // the same
  in_memory::message_tables messages;     // the same
  std::map<std::string, delivery, std::less<>> deliveries; // written outside commit
  audit_hasher hasher;

  [[nodiscard]] std::string head_hash() const {
    return events.empty() ? std::string{audit_genesis_hash} : events.back().hash;
  }

  sreh::error create(const run& r, commit_result& res, undo_log& undo);
  sreh::error update(const run& r, undo_log& undo);
  sreh::error append(const event& e); // undone by the log's length
  sreh::error apply(const write_batch& b, commit_result& res, undo_log& undo);
  void roll_back(undo_log& undo);
};

namespace in_memory {

template <class T>
struct as_expected {
  using type = expected<T>;
};
template <class T>
struct as_expected<expected<T>> {
  using type = expected<T>;
};

/// `read()` under the contents' lock, unless the store is set to fail (fail_with).
template <class Read>
auto read_locked(in_memory_store::contents& c, Read read) ->
  typename as_expected<std::decay_t<std::invoke_result_t<Read>>>::type {
  std::lock_guard lk{c.mtx};
  if (c.failure)
    return c.failure;
  return read();
}

} // namespace in_memory

} // namespace sreh::persistence
