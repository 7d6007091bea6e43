#pragma once

#include <functional>
#include <vector>

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
};

/// Commits each batch at once on the caller's thread and calls back before returning. For
/// tests on CAF's deterministic scheduler (the callback's message is then simply queued).
class inline_commit_queue final : public commit_queue {
 public:
  explicit inline_commit_queue(committer& s) : store_(s) {}
  void submit(write_batch b, callback cb) override {
    std::vector<write_batch> batches;
    batches.push_back(std::move(b));
    auto results = store_.commit(batches);
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
