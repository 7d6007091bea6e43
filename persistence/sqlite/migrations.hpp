#pragma once

#include <span>
#include <string_view>

#include "core/base/status.hpp"

struct sqlite3;

namespace sreh::persistence {

/// One step of the SQLite schema: the script that takes the database to `version`, and what
/// SQL cannot do (e.g. hashing existing rows), run after the script in the same transaction.
struct sqlite_migration {
  using step_fn = sreh::error (*)(sqlite3* db, std::string_view path);
  int version;
  std::string_view sql;
  step_fn then = nullptr;
};

/// The migrations of this build, in ascending version order.
[[nodiscard]] std::span<const sqlite_migration> sqlite_migrations();

/// Brings `db` (the file `path`, named in errors) up to the last of `migrations`: creates the
/// `schema_version` table if needed and applies the missing scripts in one transaction, each
/// under a savepoint of its own recording its version there (script, `then` and the record stand
/// together). A database whose
/// version is newer than the last migration is an error naming the file and both versions; a failed
/// script leaves the database at the previous version. Called with the write connection before any
/// other use.
[[nodiscard]] sreh::error migrate_sqlite(sqlite3* db, std::string_view path,
                                         std::span<const sqlite_migration> migrations);

/// The schema version recorded in `db` (0 for an empty database), or -1 on error.
[[nodiscard]] int sqlite_database_version(sqlite3* db);

} // namespace sreh::persistence
