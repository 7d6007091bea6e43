#pragma once
// The audit hash chain inside the SQLite store (the format is in persistence/audit/audit.hpp).

#include <sqlite3.h>

#include <memory>
#include <string>
#include <string_view>

#include "core/base/expected.hpp"

namespace sreh::persistence::sqlite {

/// A statement prepared once, outside a connection's cache; finalized on destruction.
using prepared = std::unique_ptr<sqlite3_stmt, decltype(&sqlite3_finalize)>;

/// Prepares `sql` on `db`; errors name `op` and `path`.
[[nodiscard]] expected<prepared> prepare(sqlite3* db, const char* sql, std::string_view op,
                                         std::string_view path);

/// Migration 2: fills prev_hash and hash of the entries written before the chain existed, in
/// seq order, a page at a time. Runs inside the migration's transaction.
[[nodiscard]] sreh::error hash_existing_events(sqlite3* db, std::string_view path);

/// The hash of the last entry, or the genesis hash for an empty log.
[[nodiscard]] expected<std::string> read_last_hash(sqlite3* db, std::string_view path);

} // namespace sreh::persistence::sqlite
