#pragma once
// The mutating actions this node has allowed and not yet finished, for rate limits.

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/policy/policy.hpp"

namespace sreh::policy {

/// Rate limits count the actions of their window that succeeded or run (the store's tool steps,
/// every node's). An action allowed here is in the store once its intent commits; until then,
/// runs that propose the same action at the same moment (an alert storm) would all be allowed the
/// last slot. The run actor holds each allowed mutating action here from its policy check (which
/// decides under `lock()`, so checks are one at a time); a failed one is released when its
/// outcome commits, one that succeeded when it leaves the window. The check counts the held
/// actions the store did not show it.
/// Thread-safe through `lock()`: call every other member but `size()` with it held.
class action_holds {
 public:
  [[nodiscard]] std::unique_lock<std::mutex> lock() { return std::unique_lock{mtx_}; }

  /// Holds the action of step `n` of run `run_id`.
  void hold(const std::string& run_id, std::int64_t n, policy::past_action a) {
    held_.push_back({run_id, n, std::move(a)});
    count_.store(held_.size(), std::memory_order_relaxed);
  }

  /// Step `n` of `run_id` failed and its outcome is committed: its action is forgotten. (One that
  /// succeeded stays until it leaves the window: a check that read the store before that commit
  /// must still count it; the steps the store shows are not counted twice.)
  void release_failed(const std::string& run_id, std::int64_t n) {
    std::erase_if(held_, [&](const entry& e) { return e.n == n && e.run_id == run_id; });
    count_.store(held_.size(), std::memory_order_relaxed);
  }

  /// Forgets every hold of `run_id`.
  void release_run(const std::string& run_id) {
    std::erase_if(held_, [&](const entry& e) { return e.run_id == run_id; });
    count_.store(held_.size(), std::memory_order_relaxed);
  }

  /// Appends the held actions since `since` to `out`, but those of the steps in `stored` (the
  /// store counts them already), and forgets older ones (a run that died holding one never
  /// released it; it stops counting when it leaves every window).
  void append_since(timestamp_us since,
                    const std::set<std::pair<std::string, std::int64_t>>& stored,
                    std::vector<policy::past_action>& out) {
    std::erase_if(held_, [&](const entry& e) { return e.action.at < since; });
    count_.store(held_.size(), std::memory_order_relaxed);
    for (const auto& e : held_)
      if (!stored.contains({e.run_id, e.n}))
        out.push_back(e.action);
  }

  /// How many are held; may be read without the lock (a hint: nothing to release when 0).
  [[nodiscard]] std::size_t size() const { return count_.load(std::memory_order_relaxed); }

 private:
  struct entry {
    std::string run_id;
    std::int64_t n = 0;
    policy::past_action action;
  };
  std::mutex mtx_;
  std::vector<entry> held_;
  std::atomic<std::size_t> count_{0};
};

} // namespace sreh::policy
