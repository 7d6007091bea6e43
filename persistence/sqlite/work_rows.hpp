#pragma once
// The SQL of Works, template versions and world state in the SQLite store, and the mapping
// between their rows and the domain types (works.cpp). A Work is read from its `doc` column;
// the other columns are what queries filter on.

#include <string>

#include "core/base/expected.hpp"
#include "core/works/work.hpp"
#include "core/world/entity.hpp"
#include "persistence/sqlite/statement.hpp"
#include "persistence/store/committer.hpp"

namespace sreh::persistence::sqlite {

// -- works ---------------------------------------------------------------------------------------

inline constexpr const char* sql_insert_work =
  "INSERT INTO works (id, state, kind, severity, template, template_version, title, labels, "
  "idempotency_key, node_id, created_at, updated_at, doc) VALUES "
  "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)";
inline constexpr const char* sql_update_work =
  "UPDATE works SET state = ?2, kind = ?3, severity = ?4, template = ?5, template_version = ?6, "
  "title = ?7, labels = ?8, idempotency_key = ?9, node_id = ?10, created_at = ?11, "
  "updated_at = ?12, doc = ?13 WHERE id = ?1";
inline constexpr const char* sql_work_by_key =
  "SELECT id FROM works WHERE idempotency_key = ?1 AND idempotency_key <> ''";
inline constexpr const char* sql_get_work = "SELECT id, doc FROM works WHERE id = ?1";
// Listing: ?1 limit, ?2 before_id, ?3 state, ?4 kind, ?5 severity, ?6 a label as it appears in
// the compact labels (work_codec.hpp: label_pattern), ?7 text; a NULL parameter filters nothing.
// The label and the text narrow the rows; work_codec's `matches` decides. State gets its own
// statement so that its index is used.
#define SREH_WORK_LIST_TAIL                                                                        \
  " AND (?2 IS NULL OR id < ?2) AND (?4 IS NULL OR kind = ?4) AND "                                \
  "(?5 IS NULL OR severity = ?5) AND (?6 IS NULL OR instr(labels, ?6) > 0) AND "                   \
  "(?7 IS NULL OR instr(lower(title), lower(?7)) > 0) ORDER BY id DESC LIMIT ?1"
inline constexpr const char* sql_list_works =
  "SELECT id, doc FROM works WHERE (?3 IS NULL OR state = ?3)" SREH_WORK_LIST_TAIL;
inline constexpr const char* sql_list_works_state =
  "SELECT id, doc FROM works WHERE state = ?3" SREH_WORK_LIST_TAIL;
#undef SREH_WORK_LIST_TAIL
// The WHERE clause repeats the partial index's condition word for word so the planner uses it.
inline constexpr const char* sql_open_works =
  "SELECT id, doc FROM works WHERE node_id = ?1 AND state NOT IN ('resolved', 'cancelled') "
  "ORDER BY created_at, id";

/// Binds all of `w` as ?1..?13 (the order of `sql_insert_work`, `sql_update_work`). The compact
/// labels and the document live in `scratch`, which must outlive the statement's step.
void bind_work(stmt_use& q, const works::work& w, std::string (&scratch)[2]);
/// Reads a row of (id, doc); a document that does not decode is an `internal` error naming it.
[[nodiscard]] expected<works::work> read_work(const stmt_use& q);

// -- template versions ---------------------------------------------------------------------------

inline constexpr const char* sql_insert_template =
  "INSERT INTO work_templates (name, version, kind, text, first_seen) VALUES "
  "(?1, ?2, ?3, ?4, ?5) ON CONFLICT (name, version) DO NOTHING";
inline constexpr const char* sql_get_template =
  "SELECT name, version, kind, text, first_seen FROM work_templates WHERE name = ?1 AND "
  "version = ?2";

// -- world state ---------------------------------------------------------------------------------

#define SREH_ENTITY_COLUMNS                                                                        \
  "id, kind, version, attrs, depends_on, source, changed_by, observed_at, updated_at"

inline constexpr const char* sql_upsert_entity =
  "INSERT INTO world_entities (" SREH_ENTITY_COLUMNS ") VALUES "
  "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) ON CONFLICT (id) DO UPDATE SET kind = excluded.kind, "
  "version = excluded.version, attrs = excluded.attrs, depends_on = excluded.depends_on, "
  "source = excluded.source, changed_by = excluded.changed_by, "
  "observed_at = excluded.observed_at, updated_at = excluded.updated_at";
inline constexpr const char* sql_insert_history =
  "INSERT INTO world_history (" SREH_ENTITY_COLUMNS ") VALUES "
  "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)";
inline constexpr const char* sql_world_entities =
  "SELECT " SREH_ENTITY_COLUMNS " FROM world_entities ORDER BY id";
inline constexpr const char* sql_world_entity =
  "SELECT " SREH_ENTITY_COLUMNS " FROM world_entities WHERE id = ?1";
inline constexpr const char* sql_entity_history =
  "SELECT " SREH_ENTITY_COLUMNS " FROM world_history WHERE id = ?1 ORDER BY version DESC "
  "LIMIT ?2";

#undef SREH_ENTITY_COLUMNS

/// Binds all of `e` as ?1..?9 (attrs and depends_on as JSON in `scratch`, which must outlive the
/// statement's step).
void bind_entity(stmt_use& q, const world::entity& e, std::string (&scratch)[2]);
/// Reads a row selected with the entity columns; bad JSON or an unknown source is `internal`.
[[nodiscard]] expected<world::entity> read_entity(const stmt_use& q, const char* table);

// -- the write path ------------------------------------------------------------------------------

/// The Work holding `key` on the write connection (earlier batches of the transaction
/// included); "" when none does or `key` is empty.
[[nodiscard]] expected<std::string> work_key_holder(connection& c, const std::string& key);
/// Writes the Work rows of `b` (create_work, update_work, templates, entities) inside the open
/// transaction. A missing Work or a history version written before is `internal`.
[[nodiscard]] sreh::error write_work_rows(connection& c, const write_batch& b);

} // namespace sreh::persistence::sqlite
