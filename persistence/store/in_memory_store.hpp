#pragma once
// The store in memory, for unit tests: the in-memory implementation at the store's seam
// (STYLE.md: an interface where I/O enters has a real implementation and an in-memory one). It
// keeps the whole contract of store.hpp — it passes tests/integration/store_conformance* as
// SREH_TEST_STORE=in_memory — without a file or a server: atomic commits that apply nothing on
// failure, gap-free event seqs with the audit chain (persistence/audit), idempotency keys, the
// orders and the paging (paging.hpp) of the other stores. Nothing survives the process.

#include <memory>
#include <string>

#include "persistence/store/store.hpp"

namespace sreh::persistence {

/// A store whose rows live in memory. Thread-safe: one mutex guards the contents, so reads wait
/// for a commit (never long: nothing blocks inside). No cluster store.
class in_memory_store final : public store {
 public:
  /// What the store holds. Stores made on the same contents see the same rows: that is what a
  /// reopen of a database file is to the SQLite store.
  struct contents;

  /// An empty store.
  in_memory_store();
  /// A store on `c`, shared with the stores already made on it.
  explicit in_memory_store(std::shared_ptr<contents> c);
  ~in_memory_store() override;
  in_memory_store(const in_memory_store&) = delete;
  in_memory_store& operator=(const in_memory_store&) = delete;

  /// The contents, to make another store on them.
  [[nodiscard]] std::shared_ptr<contents> shared_contents() const { return c_; }

  /// Until called again with no error, every method fails with `err` (a commit applies
  /// nothing): a database that is away, for tests of the callers' error paths. For every store
  /// on these contents.
  void fail_with(sreh::error err);

  /// The hash of the newest entry of the audit chain (audit.hpp); the genesis hash when the log
  /// is empty.
  [[nodiscard]] std::string last_hash() const;

  std::vector<commit_result> commit(std::vector<write_batch>& batches) override;
  expected<std::optional<run>> get_run(std::string_view id) override;
  expected<run_page> list_runs(const run_filter& f) override;
  expected<std::vector<step>> get_steps(std::string_view run_id) override;
  expected<std::vector<event>> read_events(const event_filter& f) override;
  expected<std::vector<run>> unfinished_runs(std::string_view node_id) override;
  expected<std::optional<std::string>> find_by_idempotency_key(std::string_view key) override;
  expected<std::vector<step>> rate_counted_tool_steps(timestamp_us since) override;
  expected<store_stats> stats() override;
  expected<std::optional<approval>> get_approval(std::string_view id) override;
  expected<approval_page> list_approvals(const approval_filter& f) override;
  expected<std::vector<approval>> pending_approvals() override;
  expected<std::optional<approval>> approval_for_step(std::string_view run_id,
                                                      std::int64_t n) override;
  expected<std::optional<works::work>> get_work(std::string_view id) override;
  expected<work_page> list_works(const work_filter& f) override;
  expected<std::vector<works::work>> open_works(std::string_view node_id) override;
  expected<std::optional<std::string>> work_by_idempotency_key(std::string_view key) override;
  expected<std::optional<works::stored_template>> get_template(std::string_view name,
                                                               std::string_view version) override;
  expected<std::vector<world::entity>> world_entities() override;
  expected<std::optional<world::entity>> world_entity(std::string_view id) override;
  expected<std::vector<world::entity>> entity_history(std::string_view id, int limit) override;
  expected<std::vector<memory::candidate>> search_memories(const memory::query& q) override;
  expected<std::optional<memory::entry>> get_memory(std::string_view id) override;
  expected<std::optional<memory::entry>> memory_version(std::string_view id,
                                                        std::int64_t version) override;
  expected<std::vector<memory::entry>> memory_versions(std::string_view id) override;
  expected<std::optional<evolve::candidate>> get_candidate(std::string_view id) override;
  expected<std::vector<evolve::candidate>> list_candidates(int limit) override;
  // runs' conversations (in_memory_messages.cpp)
  expected<std::vector<conversation::message>>
  list_messages(std::string_view run_id, std::int64_t after_seq, int limit) override;
  expected<std::vector<conversation::message>> untaken_messages(std::string_view run_id) override;
  expected<std::vector<std::string>> runs_with_untaken_messages() override;
  expected<std::optional<conversation::message>> message_by_key(std::string_view run_id,
                                                                std::string_view key) override;
  expected<std::int64_t> last_message_seq(std::string_view run_id) override;
  // the notifications' outbox (in_memory_deliveries.cpp)
  sreh::error enqueue_deliveries(const std::vector<delivery>& deliveries,
                                 std::string_view offset_name, std::int64_t offset) override;
  expected<std::vector<delivery>> due_deliveries(timestamp_us now, int limit) override;
  expected<std::optional<timestamp_us>> next_delivery_at() override;
  sreh::error record_attempt(const delivery& d) override;
  expected<std::optional<delivery>> get_delivery(std::string_view id) override;
  expected<delivery_page> list_deliveries(const delivery_filter& f) override;
  expected<std::optional<timestamp_us>> last_in_group(std::string_view receiver,
                                                      std::string_view group_key) override;
  expected<std::int64_t> relay_offset(std::string_view name) override;
  sreh::error set_relay_offset(std::string_view name, std::int64_t seq) override;
  sreh::error ping() override;

 private:
  std::shared_ptr<contents> c_;
};

/// An empty in-memory store.
[[nodiscard]] store_ptr make_in_memory_store();

} // namespace sreh::persistence
