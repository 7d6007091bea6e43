#pragma once

#include "sqlite_statement.hpp"
#include "sreh/core/event.hpp"
#include "sreh/core/expected.hpp"
#include "sreh/core/run.hpp"
#include "sreh/core/step.hpp"

// The SQL of the store and the mapping between rows and the domain types. Column lists and
// parameter numbers are kept together here so that a new field is added in one place.
namespace sreh::persistence::sqlite {

// -- runs ----------------------------------------------------------------------------------------

#define SREH_RUN_COLUMNS                                                                          \
  "id, goal, state, waiting_for, submitter, idempotency_key, node_id, created_at, updated_at, "  \
  "steps, tokens, max_steps, max_tokens, deadline_us, max_result_bytes, checkpoint, "            \
  "conclusion, error, labels"

inline constexpr const char* sql_insert_run =
  "INSERT INTO runs (" SREH_RUN_COLUMNS ") VALUES "
  "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19)";
inline constexpr const char* sql_update_run =
  "UPDATE runs SET goal = ?2, state = ?3, waiting_for = ?4, submitter = ?5, "
  "idempotency_key = ?6, node_id = ?7, created_at = ?8, updated_at = ?9, steps = ?10, "
  "tokens = ?11, max_steps = ?12, max_tokens = ?13, deadline_us = ?14, max_result_bytes = ?15, "
  "checkpoint = ?16, conclusion = ?17, error = ?18, labels = ?19 WHERE id = ?1";
inline constexpr const char* sql_run_by_key =
  "SELECT id FROM runs WHERE idempotency_key = ?1 AND idempotency_key <> ''";
inline constexpr const char* sql_get_run = "SELECT " SREH_RUN_COLUMNS " FROM runs WHERE id = ?1";
inline constexpr const char* sql_list_runs =
  "SELECT " SREH_RUN_COLUMNS " FROM runs ORDER BY id DESC LIMIT ?1";
inline constexpr const char* sql_list_runs_before =
  "SELECT " SREH_RUN_COLUMNS " FROM runs WHERE id < ?2 ORDER BY id DESC LIMIT ?1";
inline constexpr const char* sql_list_runs_state =
  "SELECT " SREH_RUN_COLUMNS " FROM runs WHERE state = ?3 ORDER BY id DESC LIMIT ?1";
inline constexpr const char* sql_list_runs_state_before =
  "SELECT " SREH_RUN_COLUMNS " FROM runs WHERE state = ?3 AND id < ?2 ORDER BY id DESC LIMIT ?1";
// The WHERE clause repeats the partial index's condition word for word so the planner uses it.
inline constexpr const char* sql_unfinished_runs =
  "SELECT " SREH_RUN_COLUMNS " FROM runs WHERE node_id = ?1 AND "
  "state IN ('pending', 'running', 'waiting') ORDER BY created_at, id";

#undef SREH_RUN_COLUMNS

/// Binds all of `r` as ?1..?19 (the order of `sql_insert_run`, `sql_update_run`).
void bind_run(stmt_use& q, const run& r);
/// Reads a row selected with the run columns; an unknown enum name is an `internal` error.
[[nodiscard]] expected<run> read_run(const stmt_use& q);

// -- steps ---------------------------------------------------------------------------------------

#define SREH_STEP_COLUMNS                                                                         \
  "run_id, n, kind, state, tool, args, idempotency_key, decision, result, error, "               \
  "result_truncated, started_at, finished_at, attempts"

inline constexpr const char* sql_upsert_step =
  "INSERT INTO steps (" SREH_STEP_COLUMNS ") VALUES "
  "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14) "
  "ON CONFLICT (run_id, n) DO UPDATE SET kind = excluded.kind, state = excluded.state, "
  "tool = excluded.tool, args = excluded.args, idempotency_key = excluded.idempotency_key, "
  "decision = excluded.decision, result = excluded.result, error = excluded.error, "
  "result_truncated = excluded.result_truncated, started_at = excluded.started_at, "
  "finished_at = excluded.finished_at, attempts = excluded.attempts";
inline constexpr const char* sql_get_steps =
  "SELECT " SREH_STEP_COLUMNS " FROM steps WHERE run_id = ?1 ORDER BY n";

#undef SREH_STEP_COLUMNS

void bind_step(stmt_use& q, const step& s);
[[nodiscard]] expected<step> read_step(const stmt_use& q);

// -- events --------------------------------------------------------------------------------------

inline constexpr const char* sql_insert_event =
  "INSERT INTO events (seq, id, run_id, run_seq, kind, at, data) "
  "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)";
inline constexpr const char* sql_read_events =
  "SELECT seq, id, run_id, run_seq, kind, at, data FROM events WHERE seq > ?1 "
  "ORDER BY seq LIMIT ?2";
inline constexpr const char* sql_read_run_events =
  "SELECT seq, id, run_id, run_seq, kind, at, data FROM events WHERE run_id = ?3 AND seq > ?1 "
  "ORDER BY seq LIMIT ?2";
inline constexpr const char* sql_last_seq = "SELECT coalesce(max(seq), 0) FROM events";

/// Binds `e` with `seq` as ?1..?7.
void bind_event(stmt_use& q, const event& e, std::int64_t seq);
[[nodiscard]] event read_event(const stmt_use& q);

// -- misc ----------------------------------------------------------------------------------------

inline constexpr const char* sql_stats =
  "SELECT (SELECT count(*) FROM runs), (SELECT count(*) FROM steps), "
  "(SELECT count(*) FROM events), (SELECT coalesce(max(seq), 0) FROM events)";
inline constexpr const char* sql_ping = "SELECT 1";
inline constexpr const char* sql_begin = "BEGIN IMMEDIATE";
inline constexpr const char* sql_commit = "COMMIT";
inline constexpr const char* sql_rollback = "ROLLBACK";

} // namespace sreh::persistence::sqlite
