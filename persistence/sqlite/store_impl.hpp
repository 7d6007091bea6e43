#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <source_location>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "core/base/blocking.hpp"
#include "persistence/audit/audit_hasher.hpp"
#include "persistence/sqlite/sqlite_store.hpp"
#include "persistence/sqlite/statement.hpp"
#include "persistence/store/connection_pool.hpp"

namespace sreh::persistence::sqlite {

/// Runs a prepared query and collects every row with `read` (which returns a T or an
/// expected<T>).
template <class T, class Read, class Bind>
expected<std::vector<T>> collect(connection& c, const char* sql, std::string_view op, Bind bind,
                                 Read read) {
  auto* stmt = c.cached(sql);
  if (stmt == nullptr)
    return c.last_error(op);
  stmt_use q{stmt};
  bind(q);
  std::vector<T> out;
  int rc;
  while ((rc = q.step()) == SQLITE_ROW) {
    auto v = read(q);
    if constexpr (std::is_same_v<decltype(v), T>) {
      out.push_back(std::move(v));
    } else {
      if (!v)
        return v.error();
      out.push_back(std::move(*v));
    }
  }
  if (rc != SQLITE_DONE)
    return c.last_error(op);
  return out;
}

/// Runs the cached statement `sql` bound by `bind`, which returns no rows.
template <class Bind>
sreh::error run_cached(connection& c, const char* sql, const std::string& op, Bind bind) {
  auto* stmt = c.cached(sql);
  if (stmt == nullptr)
    return c.last_error(op);
  stmt_use q{stmt};
  bind(q);
  if (q.step() != SQLITE_DONE)
    return c.last_error(op);
  return {};
}

/// Read connections shared by the read methods: `borrow` blocks until one is free, and reports a
/// call from a CAF scheduler thread (core/base/blocking.hpp), naming the method that borrows.
/// Thread-safe.
class reader_pool : public connection_pool<connection> {
 public:
  [[nodiscard]] lease borrow(std::source_location caller = std::source_location::current());
};

/// The SQLite store: one write connection used by `commit` (serialised by a mutex; the
/// group-commit writer is its only caller), and a pool of read connections for the read methods,
/// which may run concurrently with a commit (WAL: readers see the last committed state).
class sqlite_store final : public store {
 public:
  sqlite_store(std::unique_ptr<connection> writer, std::vector<std::unique_ptr<connection>> readers,
               std::int64_t last_seq, std::string last_hash);
  ~sqlite_store() override;

  std::vector<commit_result> commit(std::vector<write_batch>& batches) override;
  expected<std::optional<run>> get_run(std::string_view id) override;
  expected<run_page> list_runs(const run_filter& f) override;
  expected<std::vector<step>> get_steps(std::string_view run_id) override;
  expected<std::vector<event>> read_events(const event_filter& f) override;
  expected<std::vector<run>> unfinished_runs(std::string_view node_id) override;
  expected<std::optional<std::string>> find_by_idempotency_key(std::string_view key) override;
  expected<std::optional<approval>> get_approval(std::string_view id) override;
  expected<approval_page> list_approvals(const approval_filter& f) override;
  expected<std::vector<approval>> pending_approvals() override;
  expected<std::optional<approval>> approval_for_step(std::string_view run_id,
                                                      std::int64_t n) override;
  expected<std::vector<step>> rate_counted_tool_steps(timestamp_us since) override;
  expected<store_stats> stats() override;
  sreh::error ping() override;
  expected<std::int64_t> relay_offset(std::string_view name) override;
  sreh::error set_relay_offset(std::string_view name, std::int64_t seq) override;
  // Works, template versions, world state (works.cpp)
  expected<std::optional<works::work>> get_work(std::string_view id) override;
  expected<work_page> list_works(const work_filter& f) override;
  expected<std::vector<works::work>> open_works(std::string_view node_id) override;
  expected<std::optional<std::string>> work_by_idempotency_key(std::string_view key) override;
  expected<std::optional<works::stored_template>> get_template(std::string_view name,
                                                               std::string_view version) override;
  expected<std::vector<world::entity>> world_entities() override;
  expected<std::optional<world::entity>> world_entity(std::string_view id) override;
  expected<std::vector<world::entity>> entity_history(std::string_view id, int limit) override;
  // Long-term memory (memories.cpp)
  expected<std::vector<memory::candidate>> search_memories(const memory::query& q) override;
  expected<std::optional<memory::entry>> get_memory(std::string_view id) override;
  expected<std::optional<memory::entry>> memory_version(std::string_view id,
                                                        std::int64_t version) override;
  expected<std::vector<memory::entry>> memory_versions(std::string_view id) override;
  // The evolution gate's candidates (candidates.cpp)
  expected<std::optional<evolve::candidate>> get_candidate(std::string_view id) override;
  expected<std::vector<evolve::candidate>> list_candidates(int limit) override;
  // runs' conversations (messages.cpp)
  expected<std::vector<conversation::message>>
  list_messages(std::string_view run_id, std::int64_t after_seq, int limit) override;
  expected<std::vector<conversation::message>> untaken_messages(std::string_view run_id) override;
  expected<std::vector<std::string>> runs_with_untaken_messages() override;
  expected<std::optional<conversation::message>> message_by_key(std::string_view run_id,
                                                                std::string_view key) override;
  expected<std::int64_t> last_message_seq(std::string_view run_id) override;
  // the notifications' outbox (deliveries.cpp)
  sreh::error enqueue_deliveries(const std::vector<delivery>& deliveries,
                                 std::string_view offset_name, std::int64_t offset) override;
  expected<std::vector<delivery>> due_deliveries(timestamp_us now, int limit) override;
  expected<std::optional<timestamp_us>> next_delivery_at() override;
  sreh::error record_attempt(const delivery& d) override;
  expected<std::optional<delivery>> get_delivery(std::string_view id) override;
  expected<delivery_page> list_deliveries(const delivery_filter& f) override;
  expected<std::optional<timestamp_us>> last_in_group(std::string_view receiver,
                                                      std::string_view group_key) override;

 private:
  /// The head of the event log inside a transaction: advanced per event, kept on commit.
  struct log_head {
    std::int64_t seq;
    std::string hash; // audit chain: the hash of entry `seq`
  };
  /// Applies all batches inside the open transaction.
  sreh::error apply(std::vector<write_batch>& batches, std::vector<commit_result>& results,
                    log_head& head);
  /// Applies one batch; sets `existing_run_id` (`existing_work_id`) when its create
  /// (create_work) met a known idempotency key.
  sreh::error apply_one(write_batch& b, commit_result& r, log_head& head);
  sreh::error append_events(const std::vector<event>& events, log_head& head);

  std::mutex write_mtx_;
  std::unique_ptr<connection> writer_; // guarded by write_mtx_
  log_head head_;                      // guarded by write_mtx_; rolled back with a transaction
  audit_hasher hasher_;                // guarded by write_mtx_
  reader_pool readers_;
};

/// Writes the batch's memory versions inside the open transaction (memories.cpp): `conflict`
/// when one does not follow its entry's stored version.
[[nodiscard]] sreh::error write_memory_rows(connection& c, const write_batch& b);
/// Writes the batch's candidates inside the open transaction (candidates.cpp): each replaces its
/// stored row, or inserts it.
[[nodiscard]] sreh::error write_candidate_rows(connection& c, const write_batch& b);
/// Writes the batch's messages and marks messages taken inside the open transaction
/// (messages.cpp).
[[nodiscard]] sreh::error write_message_rows(connection& c, const write_batch& b);

} // namespace sreh::persistence::sqlite
