#pragma once
// The current world graph, as the world sync last observed it: what the done-criteria of Works
// are evaluated against. Thread-safe: the sync replaces the snapshot, readers keep the one they
// took for as long as they need it.

#include <memory>
#include <mutex>
#include <vector>

#include "core/base/clock.hpp"
#include "core/world/entity.hpp"

namespace sreh::actors {

struct world_snapshot {
  std::vector<world::entity> entities; // by id
  timestamp_us world_at = 0;           // the sources' time of the observation
};

class world_view {
 public:
  [[nodiscard]] std::shared_ptr<const world_snapshot> current() const {
    std::lock_guard lock{mtx_};
    return current_;
  }
  void set(std::shared_ptr<const world_snapshot> s) {
    std::lock_guard lock{mtx_};
    current_ = std::move(s);
  }

 private:
  mutable std::mutex mtx_;
  std::shared_ptr<const world_snapshot> current_;
};

} // namespace sreh::actors
