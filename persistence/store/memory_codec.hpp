#pragma once
// What both databases share of long-term memory's rows (memory_store.hpp): the columns of a
// `memories` or `memory_versions` row as read, and the version check of a write.

#include <cstdint>
#include <string>

#include "core/base/expected.hpp"
#include "core/memory/memory.hpp"

namespace sreh::persistence {

/// One row's columns, in the order both dialects select them.
struct memory_columns {
  std::string id;
  std::string kind;
  std::int64_t version = 0;
  bool deleted = false;
  std::string text;
  std::string labels;   // a JSON object
  std::string entities; // a JSON array
  std::string run_id;
  std::string work_id;
  std::string author;
  std::string change;
  std::int64_t restored_from = 0;
  std::int64_t created_at = 0;
  std::int64_t updated_at = 0;
};

/// The entry of a row; `internal` naming the column that cannot be read.
[[nodiscard]] expected<memory::entry> memory_from_columns(memory_columns c);

/// `conflict` naming the entry when version `e.version` does not follow the stored version
/// `stored` (0: none): version 1 needs none, version N needs N−1.
[[nodiscard]] sreh::error memory_version_conflict(const memory::entry& e, std::int64_t stored);

} // namespace sreh::persistence
