#pragma once
// The run aggregate as stored: runs, their steps and the event log they produce. Written only
// through the committer (committer.hpp); these are its reads.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/clock.hpp"
#include "core/base/expected.hpp"
#include "core/model/event.hpp"
#include "core/model/run.hpp"
#include "core/model/step.hpp"
#include "persistence/store/paging.hpp"

namespace sreh::persistence {

struct run_filter {
  std::optional<run_state> state;
  std::string before_id; // cursor: runs with id < before_id (newest first)
  int limit = 50;        // 1..500 (paging.hpp)
};

struct run_page {
  std::vector<run> runs;
  std::string next_cursor; // empty on the last page
};

struct event_filter {
  std::int64_t after_seq = 0; // events with seq > after_seq, ascending
  std::string run_id;         // empty = all runs
  int limit = 1000;           // 1..10,000 (paging.hpp)
};

struct store_stats {
  std::int64_t runs = 0;
  std::int64_t steps = 0;
  std::int64_t events = 0;
  std::int64_t last_event_seq = 0;
};

/// Reads of runs, steps and events. Thread-safe; reads may run concurrently with a commit and
/// see the last committed state. Errors: `unavailable` when the database is away or busy,
/// `internal` for a row that cannot be read (an unknown enum name). Absence is not an error
/// (an empty optional or vector).
class run_store {
 public:
  virtual ~run_store() = default;

  [[nodiscard]] virtual expected<std::optional<run>> get_run(std::string_view id) = 0;
  /// One page of runs, newest id first (paging.hpp).
  [[nodiscard]] virtual expected<run_page> list_runs(const run_filter& f) = 0;
  /// The steps of a run by `n`.
  [[nodiscard]] virtual expected<std::vector<step>> get_steps(std::string_view run_id) = 0;
  /// Events after `f.after_seq` in seq order, at most `f.limit` (clamped to 1..10,000).
  [[nodiscard]] virtual expected<std::vector<event>> read_events(const event_filter& f) = 0;
  /// Runs in pending, running or waiting owned by `node_id`, oldest first (by created_at, id).
  [[nodiscard]] virtual expected<std::vector<run>> unfinished_runs(std::string_view node_id) = 0;
  /// The run created with this idempotency key, if any (none for "").
  [[nodiscard]] virtual expected<std::optional<std::string>>
  find_by_idempotency_key(std::string_view key) = 0;
  /// The tool steps rate limits count: those that succeeded at or after `since` (by
  /// `finished_at`), then the running ones: intents (no outcome yet) started at or after `since`
  /// whose run is not waiting (for an approval); each part in time order (then run id, n).
  [[nodiscard]] virtual expected<std::vector<step>> rate_counted_tool_steps(timestamp_us since) = 0;
  /// Row counts and the last event seq (0 for an empty log).
  [[nodiscard]] virtual expected<store_stats> stats() = 0;
};

/// The events of run or Work `id`, oldest first, as many as one read returns (max_event_rows): a
/// Work's timeline.
[[nodiscard]] inline expected<std::vector<event>> timeline_of(run_store& s, std::string_view id) {
  event_filter f;
  f.run_id = std::string{id};
  f.limit = max_event_rows;
  return s.read_events(f);
}

} // namespace sreh::persistence
