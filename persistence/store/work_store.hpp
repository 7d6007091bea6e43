#pragma once
// The Works aggregate as stored: Works, the template versions they are pinned to, and world
// state (the entity graph with its history). Written only through the committer
// (committer.hpp: write_batch::works, templates, entities); these are its reads. A Work's
// timeline is its events in the event log (run_store::read_events with run_id = the Work's id).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/expected.hpp"
#include "core/works/work.hpp"
#include "core/world/entity.hpp"

namespace sreh::persistence {

struct work_filter {
  std::optional<works::work_state> state;
  std::string kind;      // "" = any
  std::string severity;  // "" = any
  std::string label_key; // with label_value: Works whose labels have key = value
  std::string label_value;
  std::string text;      // case-insensitive substring of the title ("" = any)
  std::string before_id; // cursor: Works with id < before_id (newest first)
  int limit = 50;        // 1..500 (paging.hpp)
};

struct work_page {
  std::vector<works::work> works;
  std::string next_cursor; // empty on the last page
};

/// Reads of Works and template versions. Thread-safe; errors as run_store's (`unavailable`,
/// `internal` for a row that cannot be read). Absence is not an error.
class work_store {
 public:
  virtual ~work_store() = default;

  [[nodiscard]] virtual expected<std::optional<works::work>> get_work(std::string_view id) = 0;
  /// One page of Works, newest id first (paging.hpp).
  [[nodiscard]] virtual expected<work_page> list_works(const work_filter& f) = 0;
  /// Works not resolved or cancelled owned by `node_id`, oldest first (by created_at, id).
  [[nodiscard]] virtual expected<std::vector<works::work>> open_works(std::string_view node_id) = 0;
  /// The Work created with this idempotency key, if any (none for "").
  [[nodiscard]] virtual expected<std::optional<std::string>>
  work_by_idempotency_key(std::string_view key) = 0;
  /// A template version stored with the first Work pinned to it.
  [[nodiscard]] virtual expected<std::optional<works::stored_template>>
  get_template(std::string_view name, std::string_view version) = 0;
};

/// Reads of world state. Thread-safe; errors as above.
class world_store {
 public:
  virtual ~world_store() = default;

  /// Every entity at its current version, by id.
  [[nodiscard]] virtual expected<std::vector<world::entity>> world_entities() = 0;
  [[nodiscard]] virtual expected<std::optional<world::entity>>
  world_entity(std::string_view id) = 0;
  /// The versions of entity `id`, newest first, at most `limit` (clamped to 1..1,000).
  [[nodiscard]] virtual expected<std::vector<world::entity>> entity_history(std::string_view id,
                                                                            int limit) = 0;
};

} // namespace sreh::persistence
