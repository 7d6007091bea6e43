#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "persistence/store/store.hpp"

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

/// Leadership of one relay across the nodes of a cluster: a PostgreSQL session advisory lock,
/// held on a connection of its own for as long as that connection lives (a node that dies or
/// loses the database loses the lock, and another node's `acquire` then succeeds). The same
/// connection LISTENs for the store's commit notifications, so the active relay wakes when any
/// node commits events. Not thread-safe: one relay thread uses it.
class relay_lock {
 public:
  virtual ~relay_lock() = default;
  /// Takes the lock when it is free; true while this session holds it. A lost connection means
  /// a lost lock: false (or the connection error), and a later call connects and tries again.
  [[nodiscard]] virtual expected<bool> acquire() = 0;
  /// Waits up to `d` for a commit notification; true when one arrived.
  virtual bool wait_for_commit(std::chrono::milliseconds d) = 0;
  /// Gives the lock up (closes the session).
  virtual void release() = 0;
};

/// The relay lock named `name` in the store's schema; connects on the first `acquire`.
[[nodiscard]] std::unique_ptr<relay_lock> make_postgres_relay_lock(const postgres_options& opts,
                                                                   std::string name);

/// The schema version this build migrates to.
[[nodiscard]] int postgres_schema_version();

} // namespace sreh::persistence
