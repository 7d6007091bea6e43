#include "persistence/sqlite/audit.hpp"

#include <fmt/format.h>

#include <vector>

#include "persistence/audit/audit.hpp"
#include "persistence/audit/audit_chain.hpp"
#include "persistence/sqlite/rows.hpp"
#include "persistence/sqlite/statement.hpp"

namespace sreh::persistence::sqlite {

expected<prepared> prepare(sqlite3* db, const char* sql, std::string_view op,
                           std::string_view path) {
  sqlite3_stmt* stmt = nullptr;
  if (int rc = sqlite3_prepare_v2(db, sql, -1, &stmt, nullptr); rc != SQLITE_OK) {
    sqlite3_finalize(stmt);
    return make_error(db, rc, op, path);
  }
  return prepared{stmt, &sqlite3_finalize};
}

sreh::error hash_existing_events(sqlite3* db, std::string_view path) {
  auto select = prepare(db,
                        "SELECT seq, id, run_id, run_seq, kind, at, data FROM events "
                        "WHERE seq > ?1 ORDER BY seq LIMIT ?2",
                        "hash existing events", path);
  if (!select)
    return select.error();
  auto update = prepare(db, "UPDATE events SET prev_hash = ?2, hash = ?3 WHERE seq = ?1",
                        "hash existing events", path);
  if (!update)
    return update.error();
  auto read = [&](std::int64_t after, int limit) -> expected<std::vector<event>> {
    std::vector<event> page;
    stmt_use q{select->get()};
    q.bind(1, after).bind(2, limit);
    int rc;
    while ((rc = q.step()) == SQLITE_ROW)
      page.push_back(read_event(q));
    if (rc != SQLITE_DONE)
      return make_error(db, sqlite3_extended_errcode(db), "hash existing events", path);
    return page;
  };
  auto write = [&](const std::vector<audit_link>& links) -> sreh::error {
    for (const auto& l : links) {
      stmt_use q{update->get()};
      q.bind(1, l.seq).bind(2, l.prev_hash).bind(3, l.hash);
      if (q.step() != SQLITE_DONE)
        return make_error(db, sqlite3_extended_errcode(db),
                          fmt::format("hash existing event {}", l.seq), path);
    }
    return {};
  };
  return chain_existing_events(
    fmt::format("sqlite: hash existing events: SHA-256 failed ({})", path), read, write);
}

expected<std::string> read_last_hash(sqlite3* db, std::string_view path) {
  auto stmt =
    prepare(db, "SELECT hash FROM events ORDER BY seq DESC LIMIT 1", "read last hash", path);
  if (!stmt)
    return stmt.error();
  stmt_use q{stmt->get()};
  const int rc = q.step();
  if (rc == SQLITE_DONE)
    return std::string{audit_genesis_hash};
  if (rc != SQLITE_ROW)
    return make_error(db, sqlite3_extended_errcode(db), "read last hash", path);
  return q.text(0);
}

} // namespace sreh::persistence::sqlite
