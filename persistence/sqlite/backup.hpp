#pragma once
// A consistent copy of a live store file (`sreh backup`, `sreh restore`), and what a copy holds.

#include <cstdint>
#include <functional>
#include <string>

#include "core/base/expected.hpp"

namespace sreh::persistence {

/// What a store file holds, read in one snapshot: what a backup's manifest records and a
/// restore checks again.
struct sqlite_store_facts {
  int schema_version = 0;
  std::int64_t runs = 0;
  std::int64_t last_seq = 0; // the newest event (0: none)
  std::string last_hash;     // its audit hash (the genesis hash when there is none)
};

/// `progress(done_pages, total_pages)` of a copy: after each slice of pages; may be empty.
using copy_progress = std::function<void(std::int64_t done, std::int64_t total)>;

/// Copies the store file `source` into the new file `dest` (an existing one is an error) with
/// SQLite's online backup API, a slice of pages at a time, all of them from one read snapshot
/// taken before the first: consistent while a node keeps writing to `source` (in WAL mode a
/// reader blocks no writer, nor a writer it). The copy is a single file (rollback journal, no
/// -wal), synced. Returns the facts of the snapshot copied; on error `dest` is removed.
[[nodiscard]] expected<sqlite_store_facts> copy_sqlite_store(const std::string& source,
                                                             const std::string& dest,
                                                             const copy_progress& progress);

/// The facts of the store file `path` after SQLite's `quick_check` of it, read-only; an error
/// names the file and what is wrong (missing, not SQLite, damaged, not a sreh store).
[[nodiscard]] expected<sqlite_store_facts> inspect_sqlite_store(const std::string& path);

} // namespace sreh::persistence
