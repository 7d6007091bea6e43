#pragma once
// Where world state comes from (core/world): a source that observes the whole graph it knows —
// the sandbox world today, integrations later. The world sync (actors/works/world_sync.hpp)
// asks each source the node has, records what changed and keeps the current graph for the
// done-criteria of Works.

#include <memory>
#include <string>
#include <vector>

#include "core/base/clock.hpp"
#include "core/base/expected.hpp"
#include "core/world/entity.hpp"

namespace sreh::actors {

/// One observation of a source: its entities and the source's own time (the sandbox's
/// simulated clock; wall time for a real system).
struct world_observation {
  std::vector<world::entity> entities;
  timestamp_us observed_at = 0;
};

class world_source {
 public:
  virtual ~world_source() = default;
  /// Names it in the history ("sandbox").
  [[nodiscard]] virtual std::string name() const = 0;
  /// Observes the graph now (`wall_now`: the node's wall clock, for a source that moves its own
  /// clock with it). May block: it runs on the tool pool, never on an actor's thread.
  [[nodiscard]] virtual expected<world_observation> observe(timestamp_us wall_now) = 0;
  /// The source's world now in the Prometheus text exposition format, for Prometheus to scrape
  /// as it scrapes a production's exporters (the sandbox's simulated production: the live demo,
  /// docs/prometheus.md); "" when the source exports nothing. Thread-safe; may block briefly.
  [[nodiscard]] virtual std::string exposition() const { return {}; }
};

using world_source_ptr = std::shared_ptr<world_source>;

} // namespace sreh::actors
