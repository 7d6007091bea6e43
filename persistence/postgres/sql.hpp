#pragma once
// The SQL of the PostgreSQL store. Reads and the commit's lookups are prepared on each
// connection under their names. The writes take whole columns as arrays (`unnest`), so a commit
// of any size is one statement per table; they are not run on their own but make up the commit
// function (`commit_at_once`), so a commit writes everything in one call.

#include <pqxx/connection>

#include <string>

#include "persistence/store/row_columns.hpp"

namespace sreh::persistence::pg {

/// A named statement: `name` is what `exec_prepared` takes.
struct statement {
  const char* name;
  const char* sql;
};

// -- the write path ------------------------------------------------------------------------------

/// The planner settings of the write connection. Its statements join whole columns (`unnest` of
/// array parameters, which a generic plan guesses at 10 rows) to tables by key; while a table is
/// small, that guess makes the cached plan hash a sequential scan of all `runs` at every commit
/// (70 µs of a 170 µs commit at 1,100 runs, growing with the table). Lookups by key are always
/// right here, so the write connection never scans, hashes nor merges.
inline constexpr const char* writer_planner_settings =
  "SET enable_seqscan = off; SET enable_hashjoin = off; SET enable_mergejoin = off; "
  "SET plan_cache_mode = force_generic_plan";

/// Serialises the writers of one schema: class id 21070 (sreh's own), object id the hash of the
/// schema. Held until the transaction ends.
inline constexpr statement lock_commit{
  "lock_commit", "SELECT pg_advisory_xact_lock(21070, hashtext(current_schema()))"};
inline constexpr statement log_head{"log_head",
                                    "SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1"};
inline constexpr statement runs_by_keys{
  "runs_by_keys", "SELECT idempotency_key, id FROM runs WHERE idempotency_key = ANY($1::text[]) "
                  "AND idempotency_key <> ''"};

#define SREH_RUN_QUALIFIED                                                                         \
  "runs.id, runs.goal, runs.state, runs.waiting_for, runs.submitter, runs.idempotency_key, "       \
  "runs.node_id, runs.created_at, runs.updated_at, runs.steps, runs.tokens, runs.max_steps, "      \
  "runs.max_tokens, runs.deadline_us, runs.max_result_bytes, runs.checkpoint, runs.conclusion, "   \
  "runs.error, runs.labels, runs.kind, runs.parent, runs.spec, runs.max_cost, runs.outcome, "      \
  "runs.quality"
#define SREH_RUN_ARRAYS                                                                            \
  "unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], "    \
  "$8::bigint[], $9::bigint[], $10::bigint[], $11::bigint[], $12::bigint[], $13::bigint[], "       \
  "$14::bigint[], $15::bigint[], $16::text[], $17::text[], $18::text[], $19::text[], "             \
  "$20::text[], "                                                                                  \
  "$21::text[], $22::text[], $23::float8[], $24::text[], $25::text[])"

inline constexpr statement insert_runs{"insert_runs", "INSERT INTO runs (" SREH_RUN_COLUMNS
                                                      ") SELECT * FROM " SREH_RUN_ARRAYS};
/// Fenced: a row is only updated while its stored owner is the writer's `node_id` (a node whose
/// runs were claimed by a survivor can no longer write them).
inline constexpr statement update_runs{
  "update_runs",
  "UPDATE runs SET goal = u.goal, state = u.state, waiting_for = u.waiting_for, "
  "submitter = u.submitter, idempotency_key = u.idempotency_key, node_id = u.node_id, "
  "created_at = u.created_at, updated_at = u.updated_at, steps = u.steps, tokens = u.tokens, "
  "max_steps = u.max_steps, max_tokens = u.max_tokens, deadline_us = u.deadline_us, "
  "max_result_bytes = u.max_result_bytes, checkpoint = u.checkpoint, "
  "conclusion = u.conclusion, error = u.error, labels = u.labels, kind = u.kind, "
  "parent = u.parent, spec = u.spec, max_cost = u.max_cost, outcome = u.outcome, quality = "
  "u.quality "
  "FROM " SREH_RUN_ARRAYS " AS u(" SREH_RUN_COLUMNS ") WHERE runs.id = u.id "
  "AND runs.node_id = u.node_id RETURNING runs.id"};
/// The events of a commit that are in the log already (a retry after a commit whose outcome was
/// unknown).
inline constexpr statement events_by_ids{"events_by_ids",
                                         "SELECT id, seq FROM events WHERE id = ANY($1::text[])"};
inline constexpr statement run_owners{"run_owners",
                                      "SELECT id, node_id FROM runs WHERE id = ANY($1::text[])"};
/// Wakes the relay (pg_relay_lock.cpp) when a commit wrote events.
inline constexpr statement notify_commit{"notify_commit",
                                         "SELECT pg_notify('sreh_events', current_schema())"};

inline constexpr statement upsert_steps{
  "upsert_steps",
  "INSERT INTO steps (" SREH_STEP_COLUMNS ") SELECT * FROM unnest($1::text[], $2::bigint[], "
  "$3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], "
  "$10::text[], $11::boolean[], $12::bigint[], $13::bigint[], $14::bigint[], "
  "$15::bigint[]) " SREH_STEP_UPSERT};

inline constexpr statement upsert_approvals{
  "upsert_approvals",
  "INSERT INTO approvals (" SREH_APPROVAL_COLUMNS ", needed_rank) SELECT * FROM unnest("
  "$1::text[], $2::text[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::text[], "
  "$8::text[], $9::text[], $10::bigint[], $11::jsonb[], $12::text[], $13::jsonb[], "
  "$14::bigint[], $15::bigint[], $16::text[], $17::jsonb[], $18::boolean[], $19::bigint[], "
  "$20::integer[]) " SREH_APPROVAL_UPSERT ", needed_rank = excluded.needed_rank"};

inline constexpr statement insert_events{
  "insert_events",
  "INSERT INTO events (" SREH_EVENT_COLUMNS ", prev_hash, hash) SELECT * FROM unnest("
  "$1::bigint[], $2::text[], $3::text[], $4::bigint[], $5::text[], $6::bigint[], $7::text[], "
  "$8::text[], $9::text[])"};

// -- reads ---------------------------------------------------------------------------------------

inline constexpr statement get_run{"get_run",
                                   "SELECT " SREH_RUN_COLUMNS " FROM runs WHERE id = $1"};
/// $1 limit, $2 before_id ('' = from the newest), $3 state.
inline constexpr statement list_runs{"list_runs", "SELECT " SREH_RUN_COLUMNS
                                                  " FROM runs WHERE ($2 = '' OR id < $2) "
                                                  "ORDER BY id DESC LIMIT $1"};
inline constexpr statement list_runs_state{
  "list_runs_state", "SELECT " SREH_RUN_COLUMNS " FROM runs WHERE state = $3 AND "
                     "($2 = '' OR id < $2) ORDER BY id DESC LIMIT $1"};
// The WHERE clause repeats the partial index's condition so the planner uses it.
inline constexpr statement unfinished_runs{
  "unfinished_runs", "SELECT " SREH_RUN_COLUMNS " FROM runs WHERE node_id = $1 AND "
                     "state IN ('pending', 'running', 'waiting') ORDER BY created_at, id"};
inline constexpr statement run_by_key{
  "run_by_key", "SELECT id FROM runs WHERE idempotency_key = $1 AND idempotency_key <> ''"};

inline constexpr statement get_steps{"get_steps", "SELECT " SREH_STEP_COLUMNS
                                                  " FROM steps WHERE run_id = $1 ORDER BY n"};
/// Two parts, each on its partial index (steps_tool_finished, steps_tool_open); an intent whose
/// run waits (for an approval) is not running.
inline constexpr statement rate_counted_tool_steps{
  "rate_counted_tool_steps",
  "SELECT * FROM (SELECT " SREH_STEP_COLUMNS " FROM steps WHERE kind = 'tool' AND "
  "state = 'succeeded' AND finished_at >= $1 UNION ALL SELECT " SREH_STEP_COLUMNS " FROM steps "
  "WHERE kind = 'tool' AND state = 'intent' AND started_at >= $1 AND NOT EXISTS (SELECT 1 FROM "
  "runs WHERE runs.id = steps.run_id AND runs.state = 'waiting')) AS s ORDER BY "
  "state = 'intent', CASE WHEN state = 'intent' THEN started_at ELSE finished_at END, run_id, n"};

inline constexpr statement read_events{
  "read_events", "SELECT " SREH_EVENT_COLUMNS " FROM events WHERE seq > $1 ORDER BY seq LIMIT $2"};
inline constexpr statement read_run_events{
  "read_run_events", "SELECT " SREH_EVENT_COLUMNS " FROM events WHERE run_id = $3 AND seq > $1 "
                     "ORDER BY seq LIMIT $2"};

inline constexpr statement get_approval{"get_approval", "SELECT " SREH_APPROVAL_COLUMNS
                                                        " FROM approvals WHERE id = $1"};
/// $1 limit, $2 before_id, $3 state, $4 run_id ('' = any), $5 the rank of the deciding role
/// (the role filter keeps approvals whose needed_rank it reaches).
#define SREH_APPROVAL_LIST_TAIL                                                                    \
  " AND ($2 = '' OR id < $2) AND needed_rank <= $5 ORDER BY id DESC LIMIT $1"
inline constexpr statement list_approvals{
  "list_approvals", "SELECT " SREH_APPROVAL_COLUMNS " FROM approvals WHERE "
                    "($3 = '' OR state = $3) AND ($4 = '' OR run_id = $4)" SREH_APPROVAL_LIST_TAIL};
inline constexpr statement list_approvals_state{
  "list_approvals_state", "SELECT " SREH_APPROVAL_COLUMNS " FROM approvals WHERE state = $3 "
                          "AND ($4 = '' OR run_id = $4)" SREH_APPROVAL_LIST_TAIL};
inline constexpr statement list_approvals_run{
  "list_approvals_run", "SELECT " SREH_APPROVAL_COLUMNS " FROM approvals WHERE run_id = $4 "
                        "AND ($3 = '' OR state = $3)" SREH_APPROVAL_LIST_TAIL};
inline constexpr statement pending_approvals{
  "pending_approvals", "SELECT " SREH_APPROVAL_COLUMNS " FROM approvals WHERE state = 'pending' "
                       "ORDER BY created_at, id"};
inline constexpr statement approval_for_step{
  "approval_for_step", "SELECT " SREH_APPROVAL_COLUMNS " FROM approvals WHERE run_id = $1 AND "
                       "step_n = $2 ORDER BY created_at DESC, id DESC LIMIT 1"};

// -- cluster membership (pg_cluster.cpp)
// ------------------------------------------------------------

/// Locks this node's row (waiting while a claimer holds it) and says whether its lease expired.
inline constexpr statement node_lease_expired{
  "node_lease_expired", "SELECT lease_until < now() FROM cluster_nodes WHERE id = $1 FOR UPDATE"};
/// $1 id, $2 http, $3 cluster, $4 roles, $5 active, $6 parked, $7 started_at, $8 ttl (ms).
inline constexpr statement upsert_node{
  "upsert_node",
  "INSERT INTO cluster_nodes (id, http, cluster, roles, active_runs, parked_runs, started_at, "
  "heartbeat_at, lease_until) VALUES ($1, $2, $3, $4, $5, $6, $7, now(), "
  "now() + $8 * interval '1 millisecond') ON CONFLICT (id) DO UPDATE SET http = excluded.http, "
  "cluster = excluded.cluster, roles = excluded.roles, active_runs = excluded.active_runs, "
  "parked_runs = excluded.parked_runs, started_at = excluded.started_at, "
  "heartbeat_at = excluded.heartbeat_at, lease_until = excluded.lease_until"};
inline constexpr statement members{
  "members",
  "SELECT n.id, n.http, n.cluster, n.roles, n.active_runs, n.parked_runs, n.started_at, "
  "(extract(epoch FROM now() - n.heartbeat_at) * 1000)::bigint, n.lease_until >= now(), "
  "(SELECT count(*) FROM runs r WHERE r.node_id = n.id "
  "AND r.state IN ('pending', 'running', 'waiting')) FROM cluster_nodes n ORDER BY n.id"};
/// $1 the claimer, $2 limit. The dead members' rows are share-locked (a member coming back
/// waits in node_lease_expired until this commits); runs another claimer holds are skipped.
inline constexpr statement claim_orphans{
  "claim_orphans",
  "WITH dead AS (SELECT id FROM cluster_nodes WHERE lease_until < now() AND id <> $1 "
  "FOR SHARE), victims AS (SELECT r.id FROM runs r WHERE r.node_id IN (SELECT id FROM dead) "
  "AND r.state IN ('pending', 'running', 'waiting') ORDER BY r.created_at, r.id LIMIT $2 "
  "FOR UPDATE OF r SKIP LOCKED) UPDATE runs SET node_id = $1 FROM victims "
  "WHERE runs.id = victims.id RETURNING " SREH_RUN_QUALIFIED};

inline constexpr statement stats{
  "stats", "SELECT (SELECT count(*) FROM runs), (SELECT count(*) FROM steps), "
           "(SELECT count(*) FROM events), (SELECT coalesce(max(seq), 0) FROM events)"};
inline constexpr statement ping{"ping", "SELECT 1"};

#undef SREH_APPROVAL_LIST_TAIL
#undef SREH_RUN_ARRAYS
#undef SREH_RUN_QUALIFIED

/// The writes of a commit in one call: a PL/pgSQL function built from the write statements above
/// (their SQL, parameters renumbered). Called alone in autocommit (one round trip) or inside a
/// transaction that read the head under the lock. It takes the commit lock, checks that the log
/// head is the one the caller hashed the events after, then writes runs, updates (fenced),
/// steps, approvals and events and notifies. Parameters: $1 head seq,
/// $2 head hash, then the columns of insert_runs, update_runs, upsert_steps, upsert_approvals and
/// insert_events. Returns one row (ok, head_seq, head_hash): ok false (nothing written) with the
/// real head when the given one is stale. A fenced update that matches fewer rows raises
/// `commit_fenced_sqlstate`, rolling everything back. The name carries a hash of the body, so
/// nodes of different versions each call their own.
struct commit_function {
  std::string name;
  std::string create_sql; // CREATE OR REPLACE FUNCTION ...
  std::string call_sql;   // SELECT * FROM name($1::bigint, $2::text, ...)
  int params = 0;
};
[[nodiscard]] const commit_function& commit_at_once();
inline constexpr const char* commit_fenced_sqlstate = "SR409";
inline constexpr const char* commit_at_once_statement = "commit_at_once";

/// Registers every statement above on `c` (libpqxx 6 prepares each on its first use).
void prepare_statements(pqxx::connection& c);

} // namespace sreh::persistence::pg
