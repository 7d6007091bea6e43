#pragma once
// World state (DESIGN.md, "Works control plane"): an entity graph — services, deployments, hosts,
// GPU nodes, jobs, flags — with the dependency edges between them, a version per entity and a
// history of its changes (who or what made each: an action, an observation, a sync). Pure: the
// store keeps it (persistence/store/world_store.hpp), the world actor feeds it
// (actors/works/world_sync), the done-criteria of Works read it.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/clock.hpp"
#include "core/base/expected.hpp"
#include "core/base/json.hpp"

namespace sreh::world {

/// What changed an entity.
enum class change_source { sync, action, observation };
[[nodiscard]] const char* to_string(change_source s);
[[nodiscard]] std::optional<change_source> parse_change_source(std::string_view s);

/// One entity as observed: its kind, numeric metrics, text properties and the entities it
/// depends on. `version` counts its changes (1 for the first); each version is kept in the
/// history with what made it.
struct entity {
  std::string id;   // unique across kinds: "checkout", "gpu-node-3", "flag:new-search"
  std::string kind; // service | database | host | gpu_node | job | flag | ... (open set)
  std::int64_t version = 0;
  std::map<std::string, double> metrics;    // error_rate, latency_p99_ms, ...
  std::map<std::string, std::string> props; // version, status, tier, ...
  std::vector<std::string> depends_on;      // ids, sorted
  change_source source = change_source::sync;
  std::string changed_by;       // "sandbox", "run_…/4" (a run's step), a sync's name
  timestamp_us observed_at = 0; // the source's clock (the sandbox's simulated time)
  timestamp_us updated_at = 0;  // wall time of the change
};

/// True when `a` and `b` describe the same observed entity (kind, metrics, props, edges): a new
/// observation equal to the stored one is not a new version.
[[nodiscard]] bool same_observation(const entity& a, const entity& b);

/// A whole graph as a source sees it now, and what applying it to `current` changes: the new
/// versions (version bumped, attribution set) of the entities that differ or are new, sorted
/// by id. Entities absent from `seen` are left as they are (a source reports what it knows).
[[nodiscard]] std::vector<entity> changes(const std::vector<entity>& current,
                                          const std::vector<entity>& seen, change_source source,
                                          std::string_view changed_by, timestamp_us now);

/// The value of `metric` of entity `id` in `graph`; `not_found` naming the entity or metric.
[[nodiscard]] expected<double> metric(const std::vector<entity>& graph, std::string_view id,
                                      std::string_view metric);

/// `metrics` and `props` as one JSON object `{"metrics": {...}, "props": {...}}`, and back: the
/// stored `attrs` column of every store. `internal` for a document of another shape.
[[nodiscard]] std::string attrs_json(const entity& e);
[[nodiscard]] sreh::error read_attrs(std::string_view json, entity& e);

/// `e` in its wire shape: id, kind, version, metrics, props, depends_on and, with `provenance`,
/// source, changed_by, observed_at and updated_at (GET /v1/world, the world.get tool).
void write_json(json::writer& w, const entity& e, bool provenance);

} // namespace sreh::world
