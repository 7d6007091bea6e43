#pragma once

#include <functional>
#include <vector>

#include "core/base/blocking.hpp"
#include "persistence/store/committer.hpp"

namespace sreh::persistence {

/// Where run actors hand their write batches. The node uses the group_writer (one thread, many
/// batches per transaction); deterministic unit tests use `inline_commit_queue`.
class commit_queue {
 public:
  using callback = std::function<void(commit_result)>;
  virtual ~commit_queue() = default;
  /// Thread-safe. `cb` runs exactly once, after the batch committed or failed.
  virtual void submit(write_batch b, callback cb) = 0;
  /// Thread-safe: batches submitted and not yet taken into a transaction.
  [[nodiscard]] virtual std::size_t backlog() const { return 0; }
};

/// Commits each batch at once on the caller's thread and calls back before returning. For
/// tests on CAF's deterministic scheduler (the callback's message is then simply queued); the
/// commit plays the writer's thread, so it is not a blocking call of the actor that submits.
class inline_commit_queue final : public commit_queue {
 public:
  explicit inline_commit_queue(committer& s) : store_(s) {}
  void submit(write_batch b, callback cb) override {
    std::vector<write_batch> batches;
    batches.push_back(std::move(b));
    auto results = [&] {
      scoped_thread_kind writer_thread{thread_kind::other};
      return store_.commit(batches);
    }();
    for (auto& e : results.front().events)
      committed.push_back(e);
    cb(std::move(results.front()));
  }
  /// Every event committed through this queue, in order.
  std::vector<event> committed;

 private:
  committer& store_;
};

} // namespace sreh::persistence
