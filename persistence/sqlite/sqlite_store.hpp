#pragma once

#include <string>

#include "persistence/store/store.hpp"

namespace sreh::persistence {

struct sqlite_options {
  std::string path;                   // database file; ":memory:" is not allowed (readers need it)
  std::string synchronous = "normal"; // normal | full
  int busy_timeout_ms = 5000;
  int reader_connections = 4;
};

/// Opens (creating if needed) and migrates the SQLite store: WAL journal, one write connection,
/// a small pool of read connections. Errors name the file and what failed.
[[nodiscard]] expected<store_ptr> open_sqlite_store(const sqlite_options& opts);

/// The schema version this build migrates to.
[[nodiscard]] int sqlite_schema_version();

} // namespace sreh::persistence
