#pragma once

#include <string>

#include "sreh/persistence/store.hpp"

namespace sreh::persistence {

struct postgres_options {
  /// libpq connection URL or key=value string, e.g. postgresql://sreh@db:5432/sreh.
  std::string url;
  /// The schema that holds the tables, created when missing; empty = the connection's
  /// search_path (normally `public`). Several sreh clusters may share a database this way.
  std::string schema;
  /// Read connections (the writer has its own): at most this many reads run at once.
  int pool_size = 4;
};

/// Connects to PostgreSQL and migrates the schema (the same versions as SQLite: 1 base,
/// 2 approvals + audit chain): one write connection used by `commit`, a bounded pool of read
/// connections. Each commit takes a transaction-level advisory lock (per schema) and reads the
/// log head inside its transaction, so writers of one schema never interleave or reuse event
/// seqs (see docs/postgres.md). Errors name the host and database, never the password.
[[nodiscard]] expected<store_ptr> open_postgres_store(const postgres_options& opts);

/// The schema version this build migrates to.
[[nodiscard]] int postgres_schema_version();

} // namespace sreh::persistence
