#pragma once

#include <pqxx/nontransaction>
#include <pqxx/transaction>

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/base/logger.hpp"
#include "persistence/audit/audit_hasher.hpp"
#include "persistence/postgres/connection.hpp"
#include "persistence/postgres/postgres_store.hpp"
#include "persistence/postgres/sql.hpp"

namespace sreh::persistence::pg {

/// Runs the prepared statement `s` with `args` on a pooled connection and reads every row with
/// `read` (which returns a T or an expected<T>).
template <class T, class Read, class... Args>
expected<std::vector<T>> collect(pool& p, std::string_view op, const statement& s, Read read,
                                 const Args&... args) {
  auto c = p.borrow();
  return c->use_retrying(op, [&](pqxx::connection& conn) -> expected<std::vector<T>> {
    pqxx::nontransaction tx{conn};
    const auto rows = tx.exec_prepared(s.name, args...);
    std::vector<T> out;
    out.reserve(rows.size());
    for (const auto& row : rows) {
      auto v = read(row);
      if constexpr (std::is_same_v<decltype(v), T>) {
        out.push_back(std::move(v));
      } else {
        if (!v)
          return v.error();
        out.push_back(std::move(*v));
      }
    }
    return out;
  });
}

/// A position in the event log: the last seq and its hash.
using log_position = std::pair<std::int64_t, std::string>;

/// The Works that hold the idempotency keys of the batches' create_work, by key (works.cpp).
[[nodiscard]] std::unordered_map<std::string, std::string>
work_key_holders(pqxx::work& tx, const std::vector<write_batch>& batches);
/// Writes the Work rows of `b` (create_work, update_work, templates, entities) in `tx`. A
/// missing Work or a history version written before is `internal` (the caller rolls back).
[[nodiscard]] sreh::error write_work_rows(pqxx::work& tx, const write_batch& b);
/// True when `b` has Work rows (then the commit goes through the transaction).
[[nodiscard]] bool has_work_rows(const write_batch& b);
/// Writes the memory versions of `b` in `tx` (memories.cpp): `conflict` when one does not follow
/// its entry's stored version. True from has_memory_rows: the commit goes through the transaction.
[[nodiscard]] sreh::error write_memory_rows(pqxx::work& tx, const write_batch& b);
[[nodiscard]] bool has_memory_rows(const write_batch& b);
/// Writes the candidates of `b` in `tx` (candidates.cpp), each replacing its row whole. True
/// from has_candidate_rows: the commit goes through the transaction.
[[nodiscard]] sreh::error write_candidate_rows(pqxx::work& tx, const write_batch& b);
[[nodiscard]] bool has_candidate_rows(const write_batch& b);
/// Writes the messages of `b` and marks the messages its steps took, in `tx` (messages.cpp).
/// True from has_message_rows: the commit goes through the transaction.
[[nodiscard]] sreh::error write_message_rows(pqxx::work& tx, const write_batch& b);
[[nodiscard]] bool has_message_rows(const write_batch& b);

/// The PostgreSQL store: one write connection used by `commit` (serialised by a mutex; the
/// group-commit writer is its only caller), and a pool of read connections for the read methods,
/// which may run concurrently with a commit (they see the last committed state).
///
/// Event seqs and the audit chain: each commit takes the schema's advisory lock and checks the
/// head of the log (last seq and hash) under it, so the head is never stale even when another
/// process wrote since (a second node, a restore). A commit is one round trip when this writer
/// knows the head (it made the last commit): the commit function checks it and writes. Else a
/// transaction reads the head under the lock first. Readers never wait for the lock.
class postgres_store final : public store, public cluster_store {
 public:
  explicit postgres_store(const postgres_options& opts);

  /// Connects the writer and migrates; called once by open_postgres_store.
  [[nodiscard]] sreh::error open();

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
  cluster_store* cluster() override { return this; }

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

  // cluster_store (pg_cluster.cpp)
  expected<heartbeat_result> heartbeat(const node_heartbeat& hb,
                                       std::chrono::milliseconds ttl) override;
  expected<std::vector<run>> claim_orphans(std::string_view node_id, int limit) override;
  expected<std::vector<std::string>> claim_orphan_works(std::string_view node_id,
                                                        int limit) override;
  expected<std::vector<node_row>> members() override;

 private:
  /// Marks in applied_ the batches whose events are all in the log already and moves those
  /// events, with their stored seqs, into their results.
  void find_applied(pqxx::work& tx, std::vector<write_batch>& batches,
                    std::vector<commit_result>& results);
  /// Applies every batch inside `tx`; returns the seq of the first event written.
  expected<std::int64_t> apply(pqxx::work& tx, std::vector<write_batch>& batches,
                               std::vector<commit_result>& results);
  /// The commit as one call of the commit function, the events hashed after `head_`; returns
  /// the first event's seq, an error, or nothing when the batches need `apply` (a create with an
  /// idempotency key, a fenced update, a head found stale twice).
  std::optional<expected<std::int64_t>> commit_in_one_trip(std::vector<write_batch>& batches,
                                                           std::vector<commit_result>& results);

  std::string schema_;
  std::mutex write_mtx_;
  connection writer_;   // guarded by write_mtx_
  audit_hasher hasher_; // guarded by write_mtx_
  pool readers_;
  // Membership (heartbeats, claims) has a connection of its own: a heartbeat never waits for a
  // free reader, so busy readers cannot make a live node's lease expire.
  std::mutex cluster_mtx_;
  connection cluster_conn_; // guarded by cluster_mtx_
  log_limiter commit_errors_{std::chrono::seconds{10}};
  // Guarded by write_mtx_. After a failed commit (whose outcome may be unknown: the connection
  // died during COMMIT) the next commits first look for batches that are in the log already.
  bool check_applied_ = false;
  std::vector<char> applied_; // per batch of the current commit: found in the log already
  // Guarded by write_mtx_: the log head (seq, hash) as this writer's last commit left it; empty
  // until a commit read it under the lock, and after any failure.
  std::optional<log_position> head_;
  int skip_at_once_ = 0; // commits left to make with `apply` after the head was found stale
};

} // namespace sreh::persistence::pg
