#pragma once
// The long-term memory aggregate as stored (core/memory, docs/memory.md): each entry's current
// version, searchable by the database's own full-text engine (SQLite FTS5, PostgreSQL tsvector
// with a GIN index), and every version it had. Written only through the committer
// (committer.hpp: write_batch::memories, with a `memory.*` event for the audit chain); these
// are its reads.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/expected.hpp"
#include "core/memory/memory.hpp"
#include "core/memory/search.hpp"

namespace sreh::persistence {

/// Reads of long-term memory. Thread-safe; `unavailable` when the database is away, `internal`
/// for a row that cannot be read. Absence is not an error.
class memory_store {
 public:
  virtual ~memory_store() = default;

  /// The live entries (not deleted) that match any of `memory::search_terms(q.text)` — or all of
  /// them when there are none — and `q.kind` and every label of `q.filter`: at most
  /// `memory::candidate_limit(q)`, the best text relevance first (the newest first without
  /// terms). For memory::rank to order.
  [[nodiscard]] virtual expected<std::vector<memory::candidate>>
  search_memories(const memory::query& q) = 0;
  /// The current version of entry `id` (a tombstone when it was deleted).
  [[nodiscard]] virtual expected<std::optional<memory::entry>> get_memory(std::string_view id) = 0;
  /// Version `version` of entry `id`.
  [[nodiscard]] virtual expected<std::optional<memory::entry>>
  memory_version(std::string_view id, std::int64_t version) = 0;
  /// Every version of entry `id`, newest first.
  [[nodiscard]] virtual expected<std::vector<memory::entry>>
  memory_versions(std::string_view id) = 0;
};

} // namespace sreh::persistence
