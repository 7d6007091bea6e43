#include "persistence/store/memory_codec.hpp"

#include <fmt/format.h>

namespace sreh::persistence {

expected<memory::entry> memory_from_columns(memory_columns c) {
  memory::entry e;
  auto kind = memory::parse_kind(c.kind);
  if (!kind)
    return sreh::error{errc::internal, fmt::format("kind '{}' is unknown", c.kind)};
  auto change = memory::parse_change(c.change);
  if (!change)
    return sreh::error{errc::internal, fmt::format("change '{}' is unknown", c.change)};
  auto labels = memory::read_labels(c.labels);
  if (!labels)
    return sreh::error{errc::internal, "labels: " + labels.error().message};
  auto entities = memory::read_entities(c.entities);
  if (!entities)
    return sreh::error{errc::internal, "entities: " + entities.error().message};
  e.id = std::move(c.id);
  e.kind = *kind;
  e.version = c.version;
  e.deleted = c.deleted;
  e.text = std::move(c.text);
  e.labels = std::move(*labels);
  e.entities = std::move(*entities);
  e.from = {std::move(c.run_id), std::move(c.work_id)};
  e.author = std::move(c.author);
  e.made_by = *change;
  e.restored_from = c.restored_from;
  e.created_at = c.created_at;
  e.updated_at = c.updated_at;
  return e;
}

sreh::error memory_version_conflict(const memory::entry& e, std::int64_t stored) {
  if (e.version == stored + 1)
    return {};
  if (e.version == 1)
    return {errc::conflict, fmt::format("memory {} exists already", e.id)};
  if (stored == 0)
    return {errc::conflict, fmt::format("memory {} does not exist", e.id)};
  return {errc::conflict, fmt::format("memory {} changed meanwhile: it is at version {}, not {}",
                                      e.id, stored, e.version - 1)};
}

} // namespace sreh::persistence
