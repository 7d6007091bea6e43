#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "core/base/metrics.hpp"
#include "persistence/store/commit_queue.hpp"
#include "persistence/store/committer.hpp"

namespace sreh::persistence {

struct group_writer_options {
  std::size_t max_batches_per_commit = 2048;
  /// When set, every transaction observes how many batches it carried (sreh_commit_batches).
  metrics::histogram* batches_per_commit = nullptr;
};

struct group_writer_stats {
  std::uint64_t commits = 0; // transactions
  std::uint64_t batches = 0; // write_batches applied
  std::uint64_t rows = 0;    // run, step, approval and event rows written
  std::uint64_t bytes = 0;   // approximate payload bytes written
  std::uint64_t failures = 0;
};

/// Group commit: one writer thread takes every batch submitted since the last commit, applies
/// them in one transaction and then acknowledges each batch (in submission order). Throughput is
/// therefore not bounded by one commit per step.
///
/// Concurrency: `submit` is thread-safe and never blocks on I/O. Callbacks and the committed-events
/// listener run on the writer thread, in commit order: they must be quick and must not block
/// (hand work to actors with a message), and must not call `stop`. `stop` commits what was
/// submitted, then joins; a `submit` after `stop` is answered at once with `unavailable`.
///
/// Failure: when a transaction fails with `internal` (a faulty batch, a bug), its batches are
/// committed again one by one so that only the faulty one fails; on `unavailable` (store away)
/// every batch of the transaction gets the error.
class group_writer final : public commit_queue {
 public:
  using callback = commit_queue::callback;
  using events_listener = std::function<void(std::vector<event>)>; // handed over

  group_writer(committer& s, group_writer_options opts = {});
  ~group_writer() override;
  group_writer(const group_writer&) = delete;
  group_writer& operator=(const group_writer&) = delete;

  /// Called after each successful commit with its events in seq order (e.g. the SSE hub).
  void set_events_listener(events_listener l);
  void start();
  void stop();
  void submit(write_batch b, callback cb) override;
  [[nodiscard]] std::size_t backlog() const override;
  [[nodiscard]] group_writer_stats stats() const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

} // namespace sreh::persistence
