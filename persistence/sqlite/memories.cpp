// Long-term memory in the SQLite store (schema 10): `memories` holds each entry's current
// version, `memory_versions` every version, and the FTS5 table `memory_text` (porter stemmer)
// indexes the live entries' text and tags under the rowid of their `memories` row. Search is
// FTS5's MATCH over the query's terms joined by OR, ordered by bm25.
#include <fmt/format.h>

#include "core/memory/search.hpp"
#include "persistence/sqlite/store_impl.hpp"
#include "persistence/store/memory_codec.hpp"
#include "persistence/store/store_impl.hpp"

namespace sreh::persistence::sqlite {

namespace {

#define SREH_MEMORY_COLUMNS                                                                        \
  "id, kind, version, deleted, text, labels, entities, run_id, work_id, author, change, "          \
  "restored_from, created_at, updated_at"
#define SREH_MEMORY_QUALIFIED                                                                      \
  "m.id, m.kind, m.version, m.deleted, m.text, m.labels, m.entities, m.run_id, m.work_id, "        \
  "m.author, m.change, m.restored_from, m.created_at, m.updated_at"
#define SREH_MEMORY_VALUES "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)"

constexpr const char* sql_memory_head = "SELECT version, rowid FROM memories WHERE id = ?1";
constexpr const char* sql_insert_memory_version =
  "INSERT INTO memory_versions (" SREH_MEMORY_COLUMNS ") VALUES " SREH_MEMORY_VALUES;
constexpr const char* sql_upsert_memory =
  "INSERT INTO memories (" SREH_MEMORY_COLUMNS ") VALUES " SREH_MEMORY_VALUES
  " ON CONFLICT (id) DO UPDATE SET kind = excluded.kind, version = excluded.version, "
  "deleted = excluded.deleted, text = excluded.text, labels = excluded.labels, "
  "entities = excluded.entities, run_id = excluded.run_id, work_id = excluded.work_id, "
  "author = excluded.author, change = excluded.change, restored_from = excluded.restored_from, "
  "created_at = excluded.created_at, updated_at = excluded.updated_at";
constexpr const char* sql_memory_rowid = "SELECT rowid FROM memories WHERE id = ?1";
constexpr const char* sql_unindex_memory = "DELETE FROM memory_text WHERE rowid = ?1";
constexpr const char* sql_index_memory =
  "INSERT INTO memory_text (rowid, text, tags) VALUES (?1, ?2, ?3)";

// The filters shared by both searches: ?2 kind (NULL: any), ?3 the labels an entry must have
// (a JSON object; '{}': none).
#define SREH_MEMORY_FILTERS                                                                        \
  " m.deleted = 0 AND (?2 IS NULL OR m.kind = ?2) AND NOT EXISTS (SELECT 1 FROM json_each(?3) f "  \
  "WHERE NOT EXISTS (SELECT 1 FROM json_each(m.labels) l WHERE l.key = f.key AND "                 \
  "l.value = f.value))"
/// ?1 an FTS5 query, ?4 the limit. `rank` is bm25 with the text weighed twice the tags (the
/// table's rank setting, schema 10); lower is better. Without a kind or a label filter the best
/// rows are picked inside FTS5 before any join: most of a search's time is scoring the matches.
constexpr const char* sql_search_memories =
  "SELECT " SREH_MEMORY_QUALIFIED ", -memory_text.rank FROM memory_text "
  "JOIN memories m ON m.rowid = memory_text.rowid WHERE memory_text MATCH ?1 "
  "AND" SREH_MEMORY_FILTERS " ORDER BY memory_text.rank LIMIT ?4";
constexpr const char* sql_search_all_memories =
  "SELECT " SREH_MEMORY_QUALIFIED ", -best.rank FROM (SELECT rowid AS row, rank FROM memory_text "
  "WHERE memory_text MATCH ?1 ORDER BY rank LIMIT ?2) best JOIN memories m ON m.rowid = best.row "
  "ORDER BY best.rank";
constexpr const char* sql_newest_memories =
  "SELECT " SREH_MEMORY_QUALIFIED ", 0.0 FROM memories m WHERE ?1 IS NULL AND" SREH_MEMORY_FILTERS
  " ORDER BY m.updated_at DESC, m.id DESC LIMIT ?4";
constexpr const char* sql_get_memory = "SELECT " SREH_MEMORY_COLUMNS " FROM memories WHERE id = ?1";
constexpr const char* sql_memory_version =
  "SELECT " SREH_MEMORY_COLUMNS " FROM memory_versions WHERE id = ?1 AND version = ?2";
constexpr const char* sql_memory_versions =
  "SELECT " SREH_MEMORY_COLUMNS " FROM memory_versions WHERE id = ?1 ORDER BY version DESC";

void bind_memory(stmt_use& q, const memory::entry& e, std::string (&scratch)[2]) {
  scratch[0] = memory::labels_json(e.labels);
  scratch[1] = memory::entities_json(e.entities);
  q.bind(1, e.id)
    .bind(2, memory::to_string(e.kind))
    .bind(3, e.version)
    .bind(4, e.deleted)
    .bind(5, e.text)
    .bind(6, scratch[0])
    .bind(7, scratch[1])
    .bind(8, e.from.run_id)
    .bind(9, e.from.work_id)
    .bind(10, e.author)
    .bind(11, memory::to_string(e.made_by))
    .bind(12, e.restored_from)
    .bind(13, e.created_at)
    .bind(14, e.updated_at);
}

expected<memory::entry> read_memory(const stmt_use& q) {
  auto e = memory_from_columns(
    memory_columns{q.text(0), q.text(1), q.i64(2), q.i64(3) != 0, q.text(4), q.text(5), q.text(6),
                   q.text(7), q.text(8), q.text(9), q.text(10), q.i64(11), q.i64(12), q.i64(13)});
  if (!e)
    return sreh::error{errc::internal,
                       fmt::format("sqlite: memories row {}: {}", q.text(0), e.error().message)};
  return e;
}

/// The stored version of entry `id` and its rowid (version 0: none).
expected<std::pair<std::int64_t, std::int64_t>> memory_head(connection& c, const std::string& id) {
  auto* stmt = c.cached(sql_memory_head);
  if (stmt == nullptr)
    return c.last_error("read memory version");
  stmt_use q{stmt};
  q.bind(1, id);
  const int rc = q.step();
  if (rc == SQLITE_ROW)
    return std::pair{q.i64(0), q.i64(1)};
  if (rc != SQLITE_DONE)
    return c.last_error("read memory version");
  return std::pair<std::int64_t, std::int64_t>{0, 0};
}

sreh::error write_memory(connection& c, const memory::entry& e) {
  auto head = memory_head(c, e.id);
  if (!head)
    return head.error();
  if (auto err = memory_version_conflict(e, head->first))
    return err;
  std::string scratch[2];
  const auto what = fmt::format("memory {} version {}", e.id, e.version);
  auto bind = [&](stmt_use& q) { bind_memory(q, e, scratch); };
  if (auto err = run_cached(c, sql_insert_memory_version, "insert " + what, bind))
    return err;
  if (auto err = run_cached(c, sql_upsert_memory, "upsert " + what, bind))
    return err;
  std::int64_t rowid = head->second;
  if (rowid == 0) {
    auto fresh = memory_head(c, e.id);
    if (!fresh)
      return fresh.error();
    rowid = fresh->second;
  }
  if (auto err = run_cached(c, sql_unindex_memory, "unindex " + what,
                            [&](stmt_use& q) { q.bind(1, rowid); }))
    return err;
  if (e.deleted)
    return {};
  const auto tags = memory::tags_text(e);
  return run_cached(c, sql_index_memory, "index " + what,
                    [&](stmt_use& q) { q.bind(1, rowid).bind(2, e.text).bind(3, tags); });
}

/// `terms` as an FTS5 query: each a quoted string (terms hold only letters and digits), any of
/// them matching.
std::string fts5_query(const std::vector<std::string>& terms) {
  std::string out;
  for (const auto& t : terms)
    out += fmt::format("{}\"{}\"", out.empty() ? "" : " OR ", t);
  return out;
}

} // namespace

sreh::error write_memory_rows(connection& c, const write_batch& b) {
  for (const auto& e : b.memories)
    if (auto err = write_memory(c, e))
      return err;
  return {};
}

expected<std::vector<memory::candidate>> sqlite_store::search_memories(const memory::query& q) {
  const auto terms = memory::search_terms(q.text);
  const auto match = fts5_query(terms);
  const auto filter = memory::labels_json(q.filter);
  const char* kind = q.kind ? memory::to_string(*q.kind) : nullptr;
  auto c = readers_.borrow();
  auto read = [](const stmt_use& s) -> expected<memory::candidate> {
    auto e = read_memory(s);
    if (!e)
      return e.error();
    return memory::candidate{std::move(*e), s.f64(14)};
  };
  if (!terms.empty() && kind == nullptr && q.filter.empty())
    return collect<memory::candidate>(
      *c, sql_search_all_memories, "search memories",
      [&](stmt_use& s) { s.bind(1, match).bind(2, memory::candidate_limit(q)); }, read);
  return collect<memory::candidate>(
    *c, terms.empty() ? sql_newest_memories : sql_search_memories, "search memories",
    [&](stmt_use& s) {
      if (terms.empty())
        s.bind_null(1);
      else
        s.bind(1, match);
      if (kind == nullptr)
        s.bind_null(2);
      else
        s.bind(2, kind);
      s.bind(3, filter).bind(4, memory::candidate_limit(q));
    },
    read);
}

expected<std::optional<memory::entry>> sqlite_store::get_memory(std::string_view id) {
  auto c = readers_.borrow();
  return first_row(collect<memory::entry>(
    *c, sql_get_memory, "get memory", [&](stmt_use& q) { q.bind(1, id); }, read_memory));
}

expected<std::optional<memory::entry>> sqlite_store::memory_version(std::string_view id,
                                                                    std::int64_t version) {
  auto c = readers_.borrow();
  return first_row(collect<memory::entry>(
    *c, sql_memory_version, "memory version", [&](stmt_use& q) { q.bind(1, id).bind(2, version); },
    read_memory));
}

expected<std::vector<memory::entry>> sqlite_store::memory_versions(std::string_view id) {
  auto c = readers_.borrow();
  return collect<memory::entry>(
    *c, sql_memory_versions, "memory versions", [&](stmt_use& q) { q.bind(1, id); }, read_memory);
}

} // namespace sreh::persistence::sqlite
