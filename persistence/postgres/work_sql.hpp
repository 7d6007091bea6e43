#pragma once
// The SQL of Works, template versions and world state in the PostgreSQL store (works.cpp). They
// are written row by row inside the commit's transaction, not by the commit function: Works
// change a few times per incident, and the function's parameters are near PostgreSQL's limit of
// 100. Parameters are cast where a filter compares them with '' (empty = any).

#include "persistence/postgres/sql.hpp"

namespace sreh::persistence::pg {

inline constexpr statement works_by_keys{
  "works_by_keys", "SELECT idempotency_key, id FROM works WHERE "
                   "idempotency_key = ANY($1::text[]) AND idempotency_key <> ''"};

#define SREH_WORK_COLUMNS                                                                          \
  "id, state, kind, severity, template, template_version, title, labels, idempotency_key, "        \
  "node_id, created_at, updated_at, doc"

inline constexpr statement insert_work{"insert_work",
                                       "INSERT INTO works (" SREH_WORK_COLUMNS ") VALUES "
                                       "($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)"};
inline constexpr statement update_work{
  "update_work",
  "UPDATE works SET state = $2, kind = $3, severity = $4, template = $5, template_version = $6, "
  "title = $7, labels = $8, idempotency_key = $9, node_id = $10, created_at = $11, "
  "updated_at = $12, doc = $13 WHERE id = $1 AND node_id = $10"};
/// Who owns a Work whose update matched no row: another node (fenced), or none (no such Work).
inline constexpr statement work_owner{"work_owner", "SELECT node_id FROM works WHERE id = $1"};
/// The open Works of members whose lease expired, moved to $1 (the stored document too).
inline constexpr statement claim_orphan_works{
  "claim_orphan_works",
  "WITH dead AS (SELECT id FROM cluster_nodes WHERE lease_until < now() AND id <> $1 "
  "FOR SHARE), victims AS (SELECT w.id FROM works w WHERE w.node_id IN (SELECT id FROM dead) "
  "AND w.state NOT IN ('resolved', 'cancelled') ORDER BY w.created_at, w.id LIMIT $2 "
  "FOR UPDATE OF w SKIP LOCKED) UPDATE works SET node_id = $1, "
  "doc = jsonb_set(doc::jsonb, '{node_id}', to_jsonb($1::text))::text FROM victims "
  "WHERE works.id = victims.id RETURNING works.id, works.created_at"};
inline constexpr statement work_by_key{
  "work_by_key", "SELECT id FROM works WHERE idempotency_key = $1 AND idempotency_key <> ''"};
inline constexpr statement get_work{"get_work", "SELECT id, doc FROM works WHERE id = $1"};
/// $1 limit, $2 before_id, $3 state, $4 kind, $5 severity, $6 a label as it appears in the
/// compact labels (store/work_codec.hpp), $7 text; '' = any. The label and the text narrow the
/// rows (in the "C" collation lower() folds ASCII only, as work_codec's `matches` does), which
/// `matches` then decides.
#define SREH_WORK_LIST_TAIL                                                                        \
  " AND ($2::text = '' OR id < $2::text) AND ($4::text = '' OR kind = $4::text) AND "              \
  "($5::text = '' OR severity = $5::text) AND ($6::text = '' OR strpos(labels, $6::text) > 0) "    \
  "AND ($7::text = '' OR strpos(lower(title COLLATE \"C\"), lower($7::text COLLATE \"C\")) > 0) "  \
  "ORDER BY id DESC LIMIT $1"
inline constexpr statement list_works{
  "list_works", "SELECT id, doc FROM works WHERE ($3::text = '' OR state = $3::text)"
                " " SREH_WORK_LIST_TAIL};
inline constexpr statement list_works_state{
  "list_works_state", "SELECT id, doc FROM works WHERE state = $3::text" SREH_WORK_LIST_TAIL};
#undef SREH_WORK_LIST_TAIL
// The WHERE clause repeats the partial index's condition so the planner uses it.
inline constexpr statement open_works{
  "open_works", "SELECT id, doc FROM works WHERE node_id = $1 AND "
                "state NOT IN ('resolved', 'cancelled') ORDER BY created_at, id"};

inline constexpr statement insert_template{
  "insert_template", "INSERT INTO work_templates (name, version, kind, text, first_seen) VALUES "
                     "($1, $2, $3, $4, $5) ON CONFLICT (name, version) DO NOTHING"};
inline constexpr statement get_template{
  "get_template", "SELECT name, version, kind, text, first_seen FROM work_templates WHERE "
                  "name = $1 AND version = $2"};

#define SREH_ENTITY_COLUMNS                                                                        \
  "id, kind, version, attrs, depends_on, source, changed_by, observed_at, updated_at"

inline constexpr statement upsert_entity{
  "upsert_entity",
  "INSERT INTO world_entities (" SREH_ENTITY_COLUMNS ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, "
  "$9) ON CONFLICT (id) DO UPDATE SET kind = excluded.kind, version = excluded.version, "
  "attrs = excluded.attrs, depends_on = excluded.depends_on, source = excluded.source, "
  "changed_by = excluded.changed_by, observed_at = excluded.observed_at, "
  "updated_at = excluded.updated_at"};
/// No row back: the version is in the history already.
inline constexpr statement insert_history{
  "insert_history", "INSERT INTO world_history (" SREH_ENTITY_COLUMNS ") VALUES ($1, $2, $3, $4, "
                    "$5, $6, $7, $8, $9) ON CONFLICT (id, version) DO NOTHING RETURNING id"};
inline constexpr statement world_entities{"world_entities", "SELECT " SREH_ENTITY_COLUMNS
                                                            " FROM world_entities ORDER BY id"};
inline constexpr statement world_entity{"world_entity", "SELECT " SREH_ENTITY_COLUMNS
                                                        " FROM world_entities WHERE id = $1"};
inline constexpr statement entity_history{"entity_history", "SELECT " SREH_ENTITY_COLUMNS
                                                            " FROM world_history WHERE id = $1 "
                                                            "ORDER BY version DESC LIMIT $2"};

#undef SREH_ENTITY_COLUMNS
#undef SREH_WORK_COLUMNS

/// Every statement above, for prepare_statements.
inline constexpr statement work_statements[] = {
  works_by_keys, insert_work,    update_work,      work_owner,   claim_orphan_works, work_by_key,
  get_work,      list_works,     list_works_state, open_works,   insert_template,    get_template,
  upsert_entity, insert_history, world_entities,   world_entity, entity_history};

} // namespace sreh::persistence::pg
