#include "persistence/sqlite/migrations.hpp"

#include <fmt/format.h>
#include <sqlite3.h>

#include <array>

#include "core/base/clock.hpp"
#include "persistence/sqlite/audit.hpp"
#include "persistence/sqlite/statement.hpp"
#include "persistence/store/schema_versions.hpp"

namespace sreh::persistence {

namespace {

// Version 1: runs, steps and the event log. Enum columns hold the names from core's
// to_string; JSON columns hold the text as written by the kernel.
constexpr std::string_view schema_v1 = R"sql(
CREATE TABLE runs (
  id               TEXT PRIMARY KEY,
  goal             TEXT NOT NULL,
  state            TEXT NOT NULL,
  waiting_for      TEXT NOT NULL,
  submitter        TEXT NOT NULL,
  idempotency_key  TEXT NOT NULL DEFAULT '',
  node_id          TEXT NOT NULL,
  created_at       INTEGER NOT NULL,
  updated_at       INTEGER NOT NULL,
  steps            INTEGER NOT NULL,
  tokens           INTEGER NOT NULL,
  max_steps        INTEGER NOT NULL,
  max_tokens       INTEGER NOT NULL,
  deadline_us      INTEGER NOT NULL,
  max_result_bytes INTEGER NOT NULL,
  checkpoint       TEXT NOT NULL,
  conclusion       TEXT NOT NULL,
  error            TEXT NOT NULL,
  labels           TEXT NOT NULL
);
CREATE UNIQUE INDEX runs_idempotency_key ON runs(idempotency_key) WHERE idempotency_key <> '';
CREATE INDEX runs_state ON runs(state, id);
CREATE INDEX runs_unfinished ON runs(node_id, created_at)
  WHERE state IN ('pending', 'running', 'waiting');

CREATE TABLE steps (
  run_id           TEXT NOT NULL REFERENCES runs(id),
  n                INTEGER NOT NULL,
  kind             TEXT NOT NULL,
  state            TEXT NOT NULL,
  tool             TEXT NOT NULL,
  args             TEXT NOT NULL,
  idempotency_key  TEXT NOT NULL,
  decision         TEXT NOT NULL,
  result           TEXT NOT NULL,
  error            TEXT NOT NULL,
  result_truncated INTEGER NOT NULL,
  started_at       INTEGER NOT NULL,
  finished_at      INTEGER NOT NULL,
  attempts         INTEGER NOT NULL,
  PRIMARY KEY (run_id, n)
);

CREATE TABLE events (
  seq     INTEGER PRIMARY KEY,
  id      TEXT NOT NULL UNIQUE,
  run_id  TEXT NOT NULL,
  run_seq INTEGER NOT NULL,
  kind    TEXT NOT NULL,
  at      INTEGER NOT NULL,
  data    TEXT NOT NULL
);
CREATE INDEX events_run ON events(run_id, seq);
)sql";

// Version 2: approvals; the audit hash chain over the event log (prev_hash and hash of each
// entry; existing entries are hashed in seq order by `hash_existing_events`); an index for the
// rate-limit query over executed tool steps. Role lists and votes are JSON arrays.
constexpr std::string_view schema_v2 = R"sql(
ALTER TABLE events ADD COLUMN prev_hash TEXT NOT NULL DEFAULT '';
ALTER TABLE events ADD COLUMN hash TEXT NOT NULL DEFAULT '';

CREATE TABLE approvals (
  id          TEXT PRIMARY KEY,
  run_id      TEXT NOT NULL,
  step_n      INTEGER NOT NULL,
  kind        TEXT NOT NULL,
  state       TEXT NOT NULL,
  tool        TEXT NOT NULL,
  args        TEXT NOT NULL,
  rule_id     TEXT NOT NULL,
  reason      TEXT NOT NULL,
  required    INTEGER NOT NULL,
  roles       TEXT NOT NULL,
  requester   TEXT NOT NULL,
  votes       TEXT NOT NULL,
  created_at  INTEGER NOT NULL,
  expires_at  INTEGER NOT NULL,
  on_timeout  TEXT NOT NULL,
  escalate_to TEXT NOT NULL,
  escalated   INTEGER NOT NULL,
  decided_at  INTEGER NOT NULL
);
CREATE INDEX approvals_state ON approvals(state, id);
CREATE INDEX approvals_run_step ON approvals(run_id, step_n);

CREATE INDEX steps_tool_finished ON steps(finished_at)
  WHERE kind = 'tool' AND state = 'succeeded';
)sql";

// Version 3: durable offsets of the event relays (sqlite_relay.cpp).
constexpr std::string_view schema_v3 = R"sql(
CREATE TABLE relay_offsets (
  name       TEXT PRIMARY KEY,
  seq        INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
)sql";

// Version 4: cluster membership, which lives in PostgreSQL only: nothing here. (Before the
// numbering was shared, SQLite's 4 was the index of version 5: a file at that 4 has it already,
// which is why version 5 says IF NOT EXISTS. See store/schema_versions.hpp.)
constexpr std::string_view schema_v4 = "-- cluster membership: PostgreSQL only";

// Version 5: the tool intents still running, found by rate limits (rate_counted_tool_steps).
constexpr std::string_view schema_v5 = R"sql(
CREATE INDEX IF NOT EXISTS steps_tool_open ON steps(started_at)
  WHERE kind = 'tool' AND state = 'intent';
)sql";

// Version 6: Works (a Work is its document, `doc`; the other columns are what queries filter on,
// `labels` in its compact form, see store/work_codec.hpp), the template versions they are pinned
// to, and world state: each entity at its current version and every version in its history.
constexpr std::string_view schema_v6 = R"sql(
CREATE TABLE works (
  id               TEXT PRIMARY KEY,
  state            TEXT NOT NULL,
  kind             TEXT NOT NULL,
  severity         TEXT NOT NULL,
  template         TEXT NOT NULL,
  template_version TEXT NOT NULL,
  title            TEXT NOT NULL,
  labels           TEXT NOT NULL,
  idempotency_key  TEXT NOT NULL DEFAULT '',
  node_id          TEXT NOT NULL,
  created_at       INTEGER NOT NULL,
  updated_at       INTEGER NOT NULL,
  doc              TEXT NOT NULL
);
CREATE UNIQUE INDEX works_idempotency_key ON works(idempotency_key) WHERE idempotency_key <> '';
CREATE INDEX works_state ON works(state, id);
CREATE INDEX works_open ON works(node_id, created_at)
  WHERE state NOT IN ('resolved', 'cancelled');

CREATE TABLE work_templates (
  name       TEXT NOT NULL,
  version    TEXT NOT NULL,
  kind       TEXT NOT NULL,
  text       TEXT NOT NULL,
  first_seen INTEGER NOT NULL,
  PRIMARY KEY (name, version)
);

CREATE TABLE world_entities (
  id          TEXT PRIMARY KEY,
  kind        TEXT NOT NULL,
  version     INTEGER NOT NULL,
  attrs       TEXT NOT NULL,
  depends_on  TEXT NOT NULL,
  source      TEXT NOT NULL,
  changed_by  TEXT NOT NULL,
  observed_at INTEGER NOT NULL,
  updated_at  INTEGER NOT NULL
);

CREATE TABLE world_history (
  id          TEXT NOT NULL,
  kind        TEXT NOT NULL,
  version     INTEGER NOT NULL,
  attrs       TEXT NOT NULL,
  depends_on  TEXT NOT NULL,
  source      TEXT NOT NULL,
  changed_by  TEXT NOT NULL,
  observed_at INTEGER NOT NULL,
  updated_at  INTEGER NOT NULL,
  PRIMARY KEY (id, version)
);
)sql";

// Flow runs (docs/flows.md): what drives a run, the flow run that started it, and a flow run's
// pinned definition.
constexpr std::string_view schema_v7 = R"sql(
ALTER TABLE runs ADD COLUMN kind TEXT NOT NULL DEFAULT 'goal';
ALTER TABLE runs ADD COLUMN parent TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN spec TEXT NOT NULL DEFAULT '{}';
)sql";

// A run's cost budget (budget.max_cost: the price of its model calls; 0 = none).
constexpr std::string_view schema_v8 = R"sql(
ALTER TABLE runs ADD COLUMN max_cost REAL NOT NULL DEFAULT 0;
)sql";

// What a run achieved beside how it ended, and when a tool step began to execute (after its
// approval wait).
constexpr std::string_view schema_v9 = R"sql(
ALTER TABLE runs ADD COLUMN outcome TEXT NOT NULL DEFAULT '';
ALTER TABLE steps ADD COLUMN executed_at INTEGER NOT NULL DEFAULT 0;
)sql";

// Long-term memory (docs/memory.md): each entry's current version, every version it had, and the
// FTS5 index (porter stemmer) of the live entries' text and tags, keyed by the rowid of their
// `memories` row.
constexpr std::string_view schema_v10 = R"sql(
CREATE TABLE memories (
  id            TEXT PRIMARY KEY,
  kind          TEXT NOT NULL,
  version       INTEGER NOT NULL,
  deleted       INTEGER NOT NULL,
  text          TEXT NOT NULL,
  labels        TEXT NOT NULL,
  entities      TEXT NOT NULL,
  run_id        TEXT NOT NULL,
  work_id       TEXT NOT NULL,
  author        TEXT NOT NULL,
  change        TEXT NOT NULL,
  restored_from INTEGER NOT NULL,
  created_at    INTEGER NOT NULL,
  updated_at    INTEGER NOT NULL
);
CREATE INDEX memories_newest ON memories(deleted, updated_at);

CREATE TABLE memory_versions (
  id            TEXT NOT NULL,
  kind          TEXT NOT NULL,
  version       INTEGER NOT NULL,
  deleted       INTEGER NOT NULL,
  text          TEXT NOT NULL,
  labels        TEXT NOT NULL,
  entities      TEXT NOT NULL,
  run_id        TEXT NOT NULL,
  work_id       TEXT NOT NULL,
  author        TEXT NOT NULL,
  change        TEXT NOT NULL,
  restored_from INTEGER NOT NULL,
  created_at    INTEGER NOT NULL,
  updated_at    INTEGER NOT NULL,
  PRIMARY KEY (id, version)
);

CREATE VIRTUAL TABLE memory_text USING fts5(text, tags, tokenize = 'porter unicode61');
INSERT INTO memory_text (memory_text, rank) VALUES ('rank', 'bm25(2.0, 1.0)');
)sql";

// How well a finished goal run reasoned (core/quality): its score as JSON, "" until it ends.
constexpr std::string_view schema_v11 = R"sql(
ALTER TABLE runs ADD COLUMN quality TEXT NOT NULL DEFAULT '';
)sql";

// The evolution gate's candidates (docs/evolve.md): each candidate's current state as its
// document (`doc`: evolve::to_json); the other columns are what queries filter and order on.
constexpr std::string_view schema_v12 = R"sql(
CREATE TABLE candidates (
  id         TEXT PRIMARY KEY,
  kind       TEXT NOT NULL,
  state      TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  doc        TEXT NOT NULL
);
CREATE INDEX candidates_newest ON candidates(created_at, id);
)sql";

// Runs' conversations (docs/conversation.md): each message under (run_id, seq), and the step of
// the run that took it (0 until then).
constexpr std::string_view schema_v13 = R"sql(
CREATE TABLE messages (
  run_id          TEXT NOT NULL REFERENCES runs(id),
  seq             INTEGER NOT NULL,
  id              TEXT NOT NULL UNIQUE,
  author          TEXT NOT NULL,
  kind            TEXT NOT NULL,
  text            TEXT NOT NULL,
  at              INTEGER NOT NULL,
  idempotency_key TEXT NOT NULL DEFAULT '',
  taken_step      INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (run_id, seq)
);
CREATE UNIQUE INDEX messages_key ON messages(run_id, idempotency_key) WHERE idempotency_key <> '';
CREATE INDEX messages_untaken ON messages(run_id) WHERE taken_step = 0 AND kind = 'message';
)sql";

// The unfinished runs' index again, its condition a chain of equalities: SQLite evaluates a
// partial index's condition for the old and the new row of every UPDATE of a run, and an IN list
// of three or more values it builds as a temporary table each time (two per update, about a
// tenth of the kernel bench's instructions). The queries that use the index repeat the new
// condition word for word (sql_unfinished_runs in rows.hpp).
constexpr std::string_view schema_v14 = R"sql(
DROP INDEX runs_unfinished;
CREATE INDEX runs_unfinished ON runs(node_id, created_at)
  WHERE state = 'pending' OR state = 'running' OR state = 'waiting';
)sql";

// The notifications' outbox (docs/notifications.md): one row per notice and receiver.
constexpr std::string_view schema_v15 = R"sql(
CREATE TABLE deliveries (
  id         TEXT PRIMARY KEY,
  event_seq  INTEGER NOT NULL,
  event      TEXT NOT NULL,
  receiver   TEXT NOT NULL,
  subject    TEXT NOT NULL,
  group_key  TEXT NOT NULL,
  notice     TEXT NOT NULL,
  state      TEXT NOT NULL,
  attempts   INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  next_at    INTEGER NOT NULL,
  done_at    INTEGER NOT NULL,
  last_error TEXT NOT NULL
);
CREATE INDEX deliveries_due ON deliveries(next_at) WHERE state = 'pending';
CREATE INDEX deliveries_state ON deliveries(state, id);
CREATE INDEX deliveries_group ON deliveries(receiver, group_key, created_at);
)sql";

constexpr std::array<sqlite_migration, 15> all_migrations{{
  {1, schema_v1, nullptr},
  {2, schema_v2, sqlite::hash_existing_events},
  {3, schema_v3, nullptr},
  {4, schema_v4, nullptr},
  {5, schema_v5, nullptr},
  {6, schema_v6, nullptr},
  {7, schema_v7, nullptr},
  {8, schema_v8, nullptr},
  {9, schema_v9, nullptr},
  {10, schema_v10, nullptr},
  {11, schema_v11, nullptr},
  {12, schema_v12, nullptr},
  {13, schema_v13, nullptr},
  {14, schema_v14, nullptr},
  {15, schema_v15, nullptr},
}};
static_assert(follows_schema_history(all_migrations), "one numbering: store/schema_versions.hpp");

constexpr const char* create_version_table =
  "CREATE TABLE IF NOT EXISTS schema_version ("
  "  version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)";

sreh::error exec(sqlite3* db, std::string_view path, const std::string& sql, std::string_view op) {
  if (int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr); rc != SQLITE_OK)
    return sqlite::make_error(db, rc, op, path);
  return {};
}

/// Applies `m` inside the open transaction, under a savepoint of its own: its script, `then`
/// and its version record stand together or not at all.
sreh::error apply(sqlite3* db, std::string_view path, const sqlite_migration& m) {
  const auto op = fmt::format("migration {}", m.version);
  if (auto err = exec(db, path, "SAVEPOINT migration", op))
    return err;
  const auto now_us = sreh::system_clock{}.now_us();
  auto err = exec(db, path, std::string{m.sql}, op);
  if (!err && m.then != nullptr)
    err = m.then(db, path);
  if (!err)
    err = exec(db, path,
               fmt::format("INSERT INTO schema_version (version, applied_at) VALUES ({}, {});\n"
                           "RELEASE migration;",
                           m.version, now_us),
               op);
  if (err)
    sqlite3_exec(db, "ROLLBACK TO migration; RELEASE migration", nullptr, nullptr, nullptr);
  return err;
}

} // namespace

std::span<const sqlite_migration> sqlite_migrations() {
  return all_migrations;
}

int sqlite_database_version(sqlite3* db) {
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db, "SELECT coalesce(max(version), 0) FROM schema_version", -1, &stmt,
                         nullptr) != SQLITE_OK) {
    sqlite3_finalize(stmt);
    return -1;
  }
  const int v = sqlite3_step(stmt) == SQLITE_ROW ? sqlite3_column_int(stmt, 0) : -1;
  sqlite3_finalize(stmt);
  return v;
}

sreh::error migrate_sqlite(sqlite3* db, std::string_view path,
                           std::span<const sqlite_migration> migrations) {
  if (auto err = exec(db, path, create_version_table, "create schema_version"))
    return err;
  const int current = sqlite_database_version(db);
  if (current < 0)
    return sqlite::make_error(db, sqlite3_extended_errcode(db), "read schema_version", path);
  const int known = migrations.empty() ? 0 : migrations.back().version;
  if (current > known)
    return {errc::internal,
            fmt::format("sqlite: {} has schema version {}, newer than this build knows ({}); "
                        "use a newer sreh or another file",
                        path, current, known)};
  // One transaction for all that are missing (a fresh file gets every migration in one commit,
  // not one each); a failed one is rolled back alone and the ones before it are committed.
  bool open = false;
  for (const auto& m : migrations) {
    if (m.version <= current)
      continue;
    if (!open) {
      if (auto err = exec(db, path, "BEGIN IMMEDIATE", fmt::format("migration {}", m.version)))
        return err;
      open = true;
    }
    if (auto err = apply(db, path, m)) {
      if (sqlite3_get_autocommit(db) == 0 &&
          sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr) != SQLITE_OK)
        sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
      return err;
    }
  }
  if (open)
    return exec(db, path, "COMMIT", "migrations");
  return {};
}

} // namespace sreh::persistence
