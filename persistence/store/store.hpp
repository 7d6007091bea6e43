#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/approval.hpp"
#include "core/model/event.hpp"
#include "core/base/expected.hpp"
#include "core/model/run.hpp"
#include "core/model/step.hpp"
#include "persistence/store/cluster_store.hpp"

namespace sreh::persistence {

/// One run's writes for one durable commit. Batches from many runs are applied in one
/// transaction by the group-commit writer (transactional outbox: step rows, the run's checkpoint
/// and the events they produce commit together or not at all).
struct write_batch {
  /// Insert a new run. When another run already holds `create->idempotency_key` (non-empty),
  /// nothing of this batch is applied and the result names the existing run.
  std::optional<run> create;
  /// Replace the stored row of an existing run (state, checkpoint, counters, ...).
  std::optional<run> update;
  /// Upsert by (run_id, n): the intent inserts, the outcome replaces.
  std::vector<step> steps;
  /// Upsert by id: a new approval, or its votes and state after a decision.
  std::vector<approval> approvals;
  /// Appended to the event log; `seq` is assigned at commit.
  std::vector<event> events;
};

/// What happened to one batch.
struct commit_result {
  sreh::error err;               // set when the transaction failed (nothing applied)
  std::string existing_run_id;   // set when `create` met an existing idempotency key
  std::vector<event> events;     // the batch's events with their assigned `seq`
};

struct run_filter {
  std::optional<run_state> state;
  std::string before_id;         // cursor: runs with id < before_id (newest first)
  int limit = 50;                // 1..500
};

struct run_page {
  std::vector<run> runs;
  std::string next_cursor;       // empty on the last page
};

struct event_filter {
  std::int64_t after_seq = 0;    // events with seq > after_seq, ascending
  std::string run_id;            // empty = all runs
  int limit = 1000;
};

struct approval_filter {
  std::optional<approval_state> state;
  std::string run_id;            // empty = all runs
  std::string role;              // only approvals this role may decide (rank rule); "" = all
  std::string before_id;         // cursor (newest first)
  int limit = 50;                // 1..500
};

struct approval_page {
  std::vector<approval> approvals;
  std::string next_cursor;
};

struct store_stats {
  std::int64_t runs = 0;
  std::int64_t steps = 0;
  std::int64_t events = 0;
  std::int64_t last_event_seq = 0;
};

/// The durable store. `commit` is called by one writer at a time (the group-commit writer);
/// reads are thread-safe and may run concurrently with a commit. Implementations: SQLite
/// (embedded default), PostgreSQL (cluster). Both pass tests/integration/store_conformance.
class store {
 public:
  virtual ~store() = default;

  /// Applies every batch in one transaction and returns one result per batch, in order.
  /// On failure every result carries the same error, nothing is applied and the batches are left
  /// as given (so a caller may retry them). On success each applied batch's events are moved
  /// into its result with their `seq` set (in batch order, gap-free); a batch skipped for an
  /// existing idempotency key keeps its events.
  [[nodiscard]] virtual std::vector<commit_result> commit(std::vector<write_batch>& batches) = 0;

  [[nodiscard]] virtual expected<std::optional<run>> get_run(std::string_view id) = 0;
  [[nodiscard]] virtual expected<run_page> list_runs(const run_filter& f) = 0;
  [[nodiscard]] virtual expected<std::vector<step>> get_steps(std::string_view run_id) = 0;
  [[nodiscard]] virtual expected<std::vector<event>> read_events(const event_filter& f) = 0;
  /// Runs in pending, running or waiting owned by `node_id`, oldest first.
  [[nodiscard]] virtual expected<std::vector<run>> unfinished_runs(std::string_view node_id) = 0;
  /// The run created with this idempotency key, if any.
  [[nodiscard]] virtual expected<std::optional<std::string>> find_by_idempotency_key(
    std::string_view key) = 0;
  [[nodiscard]] virtual expected<std::optional<approval>> get_approval(std::string_view id) = 0;
  [[nodiscard]] virtual expected<approval_page> list_approvals(const approval_filter& f) = 0;
  /// Every pending approval (for timers at start), oldest first.
  [[nodiscard]] virtual expected<std::vector<approval>> pending_approvals() = 0;
  /// The approval of step `n` of a run, if any (newest when several).
  [[nodiscard]] virtual expected<std::optional<approval>> approval_for_step(std::string_view run_id,
                                                                          std::int64_t n) = 0;
  /// The tool steps rate limits count: those that succeeded at or after `since` (by
  /// `finished_at`), then the running ones: intents (no outcome yet) started at or after `since`
  /// whose run is not waiting (for an approval); each part in time order.
  [[nodiscard]] virtual expected<std::vector<step>> rate_counted_tool_steps(timestamp_us since) = 0;
  [[nodiscard]] virtual expected<store_stats> stats() = 0;
  /// Cheap liveness probe for /readyz.
  [[nodiscard]] virtual sreh::error ping() = 0;
  /// Cluster membership and run leases, when this store can be shared by the nodes of a
  /// cluster (PostgreSQL); null otherwise (SQLite).
  [[nodiscard]] virtual cluster_store* cluster() { return nullptr; }

  // -- relay offsets -----------------------------------------------------------------------------
  /// The last event seq that the relay `name` (e.g. "jetstream") has delivered; 0 when it has
  /// stored none. Thread-safe.
  [[nodiscard]] virtual expected<std::int64_t> relay_offset(std::string_view name) = 0;
  /// Stores `seq` as the offset of the relay `name` (insert or replace; durable when it
  /// returns). Its own small transaction, outside `commit`. Thread-safe.
  [[nodiscard]] virtual sreh::error set_relay_offset(std::string_view name, std::int64_t seq) = 0;
};

using store_ptr = std::unique_ptr<store>;

} // namespace sreh::persistence
