#pragma once
// The SQL of long-term memory in the PostgreSQL store (memories.cpp, schema 10). Written row by
// row inside the commit's transaction, like Works. `memories.tsv` is a generated tsvector
// (English stemmer: the text weighted A, the tags B) with a GIN index; a search is `tsv @@` the
// query's terms joined by `|`, ranked by ts_rank.

#include "persistence/postgres/sql.hpp"

namespace sreh::persistence::pg {

#define SREH_PG_MEMORY_COLUMNS                                                                     \
  "id, kind, version, deleted, text, labels, entities, run_id, work_id, author, change, "          \
  "restored_from, created_at, updated_at"
#define SREH_PG_MEMORY_SELECT                                                                      \
  "id, kind, version, deleted, text, labels::text, entities, run_id, work_id, author, change, "    \
  "restored_from, created_at, updated_at"

inline constexpr statement memory_head{"memory_head",
                                       "SELECT version FROM memories WHERE id = $1 FOR UPDATE"};
inline constexpr statement insert_memory_version{
  "insert_memory_version",
  "INSERT INTO memory_versions (" SREH_PG_MEMORY_COLUMNS ") VALUES ($1, $2, $3, $4, $5, "
  "$6::jsonb, $7, $8, $9, $10, $11, $12, $13, $14)"};
inline constexpr statement upsert_memory{
  "upsert_memory",
  "INSERT INTO memories (" SREH_PG_MEMORY_COLUMNS ", tags) VALUES ($1, $2, $3, $4, $5, $6::jsonb, "
  "$7, $8, $9, $10, $11, $12, $13, $14, $15) ON CONFLICT (id) DO UPDATE SET kind = excluded.kind, "
  "version = excluded.version, deleted = excluded.deleted, text = excluded.text, "
  "labels = excluded.labels, entities = excluded.entities, run_id = excluded.run_id, "
  "work_id = excluded.work_id, author = excluded.author, change = excluded.change, "
  "restored_from = excluded.restored_from, created_at = excluded.created_at, "
  "updated_at = excluded.updated_at, tags = excluded.tags"};
/// $1 the tsquery text ('a | b'), $2 kind ('' = any), $3 the labels an entry must have, $4 limit.
inline constexpr statement search_memories{
  "search_memories",
  "SELECT " SREH_PG_MEMORY_SELECT ", ts_rank(tsv, q) FROM memories, "
  "to_tsquery('english', $1::text) q WHERE tsv @@ q AND NOT deleted AND ($2::text = '' OR "
  "kind = $2::text) AND labels @> $3::jsonb ORDER BY ts_rank(tsv, q) DESC, id LIMIT $4"};
inline constexpr statement newest_memories{
  "newest_memories",
  "SELECT " SREH_PG_MEMORY_SELECT ", 0::float8 FROM memories WHERE NOT deleted AND "
  "($1::text = '' OR kind = $1::text) AND labels @> $2::jsonb "
  "ORDER BY updated_at DESC, id DESC LIMIT $3"};
inline constexpr statement get_memory{"get_memory", "SELECT " SREH_PG_MEMORY_SELECT
                                                    " FROM memories WHERE id = $1"};
inline constexpr statement get_memory_version{
  "get_memory_version",
  "SELECT " SREH_PG_MEMORY_SELECT " FROM memory_versions WHERE id = $1 AND version = $2"};
inline constexpr statement list_memory_versions{
  "list_memory_versions",
  "SELECT " SREH_PG_MEMORY_SELECT " FROM memory_versions WHERE id = $1 ORDER BY version DESC"};

inline constexpr statement memory_statements[] = {
  memory_head, insert_memory_version, upsert_memory,       search_memories, newest_memories,
  get_memory,  get_memory_version,    list_memory_versions};

} // namespace sreh::persistence::pg
