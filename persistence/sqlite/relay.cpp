// Relay offsets in the SQLite store: one row per relay (relay_offsets, migration 3). Reads use
// the reader pool; writes take the write connection between two group commits (a single
// autocommit UPSERT, so they never wait long).

#include "core/base/clock.hpp"
#include "persistence/sqlite/store_impl.hpp"

namespace sreh::persistence::sqlite {

namespace {

constexpr const char* sql_relay_offset = "SELECT seq FROM relay_offsets WHERE name = ?1";
constexpr const char* sql_set_relay_offset =
  "INSERT INTO relay_offsets (name, seq, updated_at) VALUES (?1, ?2, ?3) "
  "ON CONFLICT (name) DO UPDATE SET seq = excluded.seq, updated_at = excluded.updated_at";

} // namespace

expected<std::int64_t> sqlite_store::relay_offset(std::string_view name) {
  auto c = readers_.borrow();
  auto rows = collect<std::int64_t>(
    *c, sql_relay_offset, "read relay offset", [&](stmt_use& q) { q.bind(1, name); },
    [](const stmt_use& q) { return q.i64(0); });
  if (!rows)
    return rows.error();
  return rows->empty() ? std::int64_t{0} : rows->front();
}

sreh::error sqlite_store::set_relay_offset(std::string_view name, std::int64_t seq) {
  check_may_block("sqlite", "set_relay_offset");
  std::lock_guard lk{write_mtx_};
  auto* stmt = writer_->cached(sql_set_relay_offset);
  if (stmt == nullptr)
    return writer_->last_error("store relay offset");
  stmt_use q{stmt};
  q.bind(1, name).bind(2, seq).bind(3, sreh::system_clock{}.now_us());
  if (q.step() != SQLITE_DONE)
    return writer_->last_error("store relay offset");
  return {};
}

} // namespace sreh::persistence::sqlite
