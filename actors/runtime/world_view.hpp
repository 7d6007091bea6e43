#pragma once
// The current world graph, as the world sync last observed it: what the done-criteria of Works
// are evaluated against. Thread-safe: the sync replaces the snapshot, readers keep the one they
// took for as long as they need it.
//
// A check after an action is judged on an observation that began after the action's outcome
// (`begun_at`), never on one that was already under way or older.

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "core/base/clock.hpp"
#include "core/world/entity.hpp"

namespace sreh::actors {

struct world_snapshot {
  std::vector<world::entity> entities; // by id
  timestamp_us world_at = 0;           // the sources' time of the observation
  /// The observation's number (`world_view::begin_observation`), its version: a newer one
  /// never gives way to an older one that finished later.
  std::uint64_t generation = 0;
  /// The node's clock when the observation began, before any source was read: it saw every
  /// action whose outcome was recorded before then.
  timestamp_us begun_at = 0;
};

class world_view {
 public:
  [[nodiscard]] std::shared_ptr<const world_snapshot> current() const {
    std::lock_guard lock{mtx_};
    return current_;
  }
  void set(std::shared_ptr<const world_snapshot> s) {
    std::lock_guard lock{mtx_};
    if (!current_ || s->generation >= current_->generation)
      current_ = std::move(s);
  }
  /// Numbers an observation as it begins (before its sources are read).
  [[nodiscard]] std::uint64_t begin_observation() { return begun_.fetch_add(1) + 1; }

 private:
  mutable std::mutex mtx_;
  std::shared_ptr<const world_snapshot> current_;
  std::atomic<std::uint64_t> begun_{0};
};

} // namespace sreh::actors
