#pragma once

#include "core/base/expected.hpp"
#include "core/model/approval.hpp"
#include "core/model/event.hpp"
#include "core/model/run.hpp"
#include "core/model/step.hpp"
#include "persistence/sqlite/statement.hpp"
#include "persistence/store/row_columns.hpp"

// The SQL of the store and the mapping between rows and the domain types. Column lists and
// parameter numbers are kept together here so that a new field is added in one place.
namespace sreh::persistence::sqlite {

// -- runs ----------------------------------------------------------------------------------------

inline constexpr const char* sql_insert_run =
  "INSERT INTO runs (" SREH_RUN_COLUMNS ") VALUES "
  "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, "
  "?21, ?22, ?23, ?24, ?25)";
inline constexpr const char* sql_update_run =
  "UPDATE runs SET goal = ?2, state = ?3, waiting_for = ?4, submitter = ?5, "
  "idempotency_key = ?6, node_id = ?7, created_at = ?8, updated_at = ?9, steps = ?10, "
  "tokens = ?11, max_steps = ?12, max_tokens = ?13, deadline_us = ?14, max_result_bytes = ?15, "
  "checkpoint = ?16, conclusion = ?17, error = ?18, labels = ?19, kind = ?20, parent = ?21, "
  "spec = ?22, max_cost = ?23, outcome = ?24, quality = ?25 WHERE id = ?1";
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
  "(state = 'pending' OR state = 'running' OR state = 'waiting') ORDER BY created_at, id";

/// Binds all of `r` as ?1..?24 (the order of `sql_insert_run`, `sql_update_run`).
void bind_run(stmt_use& q, const run& r);
/// Reads a row selected with the run columns; an unknown enum name is an `internal` error.
[[nodiscard]] expected<run> read_run(const stmt_use& q);

// -- steps ---------------------------------------------------------------------------------------

inline constexpr const char* sql_upsert_step =
  "INSERT INTO steps (" SREH_STEP_COLUMNS ") VALUES "
  "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15) " SREH_STEP_UPSERT;
inline constexpr const char* sql_get_steps =
  "SELECT " SREH_STEP_COLUMNS " FROM steps WHERE run_id = ?1 ORDER BY n";
// The WHERE clause repeats the partial index's condition word for word so the planner uses it.
// Two parts, each on its partial index (steps_tool_finished, steps_tool_open); an intent whose
// run waits (for an approval) is not running.
inline constexpr const char* sql_rate_counted_tool_steps =
  "SELECT * FROM (SELECT " SREH_STEP_COLUMNS " FROM steps WHERE kind = 'tool' AND "
  "state = 'succeeded' AND finished_at >= ?1 UNION ALL SELECT " SREH_STEP_COLUMNS " FROM steps "
  "WHERE kind = 'tool' AND state = 'intent' AND started_at >= ?1 AND NOT EXISTS (SELECT 1 FROM "
  "runs WHERE runs.id = steps.run_id AND runs.state = 'waiting')) ORDER BY state = 'intent', "
  "CASE WHEN state = 'intent' THEN started_at ELSE finished_at END, run_id, n";

void bind_step(stmt_use& q, const step& s);
[[nodiscard]] expected<step> read_step(const stmt_use& q);

// -- events --------------------------------------------------------------------------------------

inline constexpr const char* sql_insert_event =
  "INSERT INTO events (seq, id, run_id, run_seq, kind, at, data, prev_hash, hash) "
  "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)";
inline constexpr const char* sql_read_events =
  "SELECT seq, id, run_id, run_seq, kind, at, data FROM events WHERE seq > ?1 "
  "ORDER BY seq LIMIT ?2";
inline constexpr const char* sql_read_run_events =
  "SELECT seq, id, run_id, run_seq, kind, at, data FROM events WHERE run_id = ?3 AND seq > ?1 "
  "ORDER BY seq LIMIT ?2";
inline constexpr const char* sql_last_seq = "SELECT coalesce(max(seq), 0) FROM events";

/// Binds `e` with `seq` as ?1..?7 (the audit hashes are bound by the caller as ?8, ?9).
void bind_event(stmt_use& q, const event& e, std::int64_t seq);
[[nodiscard]] event read_event(const stmt_use& q);

// -- approvals -----------------------------------------------------------------------------------

inline constexpr const char* sql_upsert_approval =
  "INSERT INTO approvals (" SREH_APPROVAL_COLUMNS ") VALUES "
  "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, "
  "?19) " SREH_APPROVAL_UPSERT;
inline constexpr const char* sql_get_approval =
  "SELECT " SREH_APPROVAL_COLUMNS " FROM approvals WHERE id = ?1";
// Listing: ?1 limit, ?2 before_id, ?3 state, ?4 run_id, ?5 role; a NULL parameter filters
// nothing. State and run get their own statements so that their indexes are used.
#define SREH_APPROVAL_LIST_TAIL                                                                    \
  " AND (?2 IS NULL OR id < ?2) AND (?5 IS NULL OR sreh_may_decide(roles, ?5)) "                   \
  "ORDER BY id DESC LIMIT ?1"
inline constexpr const char* sql_list_approvals =
  "SELECT " SREH_APPROVAL_COLUMNS " FROM approvals WHERE 1" SREH_APPROVAL_LIST_TAIL;
inline constexpr const char* sql_list_approvals_state =
  "SELECT " SREH_APPROVAL_COLUMNS " FROM approvals WHERE state = ?3" SREH_APPROVAL_LIST_TAIL;
inline constexpr const char* sql_list_approvals_run =
  "SELECT " SREH_APPROVAL_COLUMNS " FROM approvals WHERE run_id = ?4"
  " AND (?3 IS NULL OR state = ?3)" SREH_APPROVAL_LIST_TAIL;
inline constexpr const char* sql_pending_approvals =
  "SELECT " SREH_APPROVAL_COLUMNS " FROM approvals WHERE state = 'pending' "
  "ORDER BY created_at, id";
inline constexpr const char* sql_approval_for_step =
  "SELECT " SREH_APPROVAL_COLUMNS " FROM approvals WHERE run_id = ?1 AND step_n = ?2 "
  "ORDER BY created_at DESC, id DESC LIMIT 1";

#undef SREH_APPROVAL_LIST_TAIL

/// Binds all of `a` as ?1..?19 (roles, votes and escalate_to as JSON arrays).
void bind_approval(stmt_use& q, const approval& a);
/// Reads a row selected with the approval columns; an unknown enum name or bad JSON is an
/// `internal` error naming the row.
[[nodiscard]] expected<approval> read_approval(const stmt_use& q);

/// Registers `sreh_may_decide(roles_json, role)` on `db`: 1 when `role` may decide an approval
/// whose roles are `roles_json` (the rule of core's apply_vote), else 0.
[[nodiscard]] int register_approval_functions(sqlite3* db);

// -- misc ----------------------------------------------------------------------------------------

inline constexpr const char* sql_stats =
  "SELECT (SELECT count(*) FROM runs), (SELECT count(*) FROM steps), "
  "(SELECT count(*) FROM events), (SELECT coalesce(max(seq), 0) FROM events)";
inline constexpr const char* sql_ping = "SELECT 1";
inline constexpr const char* sql_begin = "BEGIN IMMEDIATE";
inline constexpr const char* sql_commit = "COMMIT";
inline constexpr const char* sql_rollback = "ROLLBACK";

} // namespace sreh::persistence::sqlite
