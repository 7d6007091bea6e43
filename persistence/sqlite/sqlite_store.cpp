#include "persistence/sqlite/sqlite_store.hpp"

#include <fmt/format.h>

#include "core/base/logger.hpp"
#include "persistence/sqlite/audit.hpp"
#include "persistence/sqlite/migrations.hpp"
#include "persistence/sqlite/rows.hpp"
#include "persistence/sqlite/store_impl.hpp"
#include "persistence/store/paging.hpp"
#include "persistence/store/store_impl.hpp"

namespace sreh::persistence {

using sqlite::collect;
using sqlite::connection;
using sqlite::stmt_use;

namespace {

sreh::error check_options(const sqlite_options& o) {
  if (o.path.empty() || o.path == ":memory:" || o.path.starts_with("file:"))
    return {errc::invalid_argument,
            fmt::format("sqlite: path '{}': a database file is required", o.path)};
  if (o.synchronous != "normal" && o.synchronous != "full")
    return {errc::invalid_argument,
            fmt::format("sqlite: synchronous '{}': expected normal or full", o.synchronous)};
  if (o.reader_connections < 1 || o.reader_connections > 64)
    return {errc::invalid_argument,
            fmt::format("sqlite: reader_connections {}: expected 1..64", o.reader_connections)};
  if (o.busy_timeout_ms < 0)
    return {errc::invalid_argument,
            fmt::format("sqlite: busy_timeout_ms {}: must not be negative", o.busy_timeout_ms)};
  return {};
}

expected<std::int64_t> read_last_seq(connection& c) {
  stmt_use q{c.cached(sqlite::sql_last_seq)};
  if (q.step() != SQLITE_ROW)
    return c.last_error("read last event seq");
  return q.i64(0);
}

} // namespace

// -- reader pool ---------------------------------------------------------------------------------

namespace sqlite {

reader_pool::lease reader_pool::borrow(std::source_location caller) {
  check_may_block("sqlite", caller.function_name());
  return connection_pool::borrow();
}

// -- store ---------------------------------------------------------------------------------------

sqlite_store::sqlite_store(std::unique_ptr<connection> writer,
                           std::vector<std::unique_ptr<connection>> readers, std::int64_t last_seq,
                           std::string last_hash)
  : writer_(std::move(writer)), head_{last_seq, std::move(last_hash)} {
  for (auto& r : readers)
    readers_.add(std::move(r));
}

sqlite_store::~sqlite_store() = default;

expected<std::optional<run>> sqlite_store::get_run(std::string_view id) {
  auto c = readers_.borrow();
  return first_row(collect<run>(
    *c, sql_get_run, "get run", [&](stmt_use& q) { q.bind(1, id); }, read_run));
}

expected<run_page> sqlite_store::list_runs(const run_filter& f) {
  const page_window window{f.limit};
  const char* sql = f.state
                      ? (f.before_id.empty() ? sql_list_runs_state : sql_list_runs_state_before)
                      : (f.before_id.empty() ? sql_list_runs : sql_list_runs_before);
  auto c = readers_.borrow();
  auto rows = collect<run>(
    *c, sql, "list runs",
    [&](stmt_use& q) {
      q.bind(1, window.fetch());
      if (!f.before_id.empty())
        q.bind(2, f.before_id);
      if (f.state)
        q.bind(3, to_string(*f.state));
    },
    read_run);
  return make_page(window, std::move(rows), &run_page::runs);
}

expected<std::vector<step>> sqlite_store::get_steps(std::string_view run_id) {
  auto c = readers_.borrow();
  return collect<step>(
    *c, sql_get_steps, "get steps", [&](stmt_use& q) { q.bind(1, run_id); }, read_step);
}

expected<std::vector<event>> sqlite_store::read_events(const event_filter& f) {
  const int limit = clamp_limit(f.limit, max_event_rows);
  auto c = readers_.borrow();
  return collect<event>(
    *c, f.run_id.empty() ? sql_read_events : sql_read_run_events, "read events",
    [&](stmt_use& q) {
      q.bind(1, f.after_seq).bind(2, limit);
      if (!f.run_id.empty())
        q.bind(3, f.run_id);
    },
    read_event);
}

expected<std::vector<run>> sqlite_store::unfinished_runs(std::string_view node_id) {
  auto c = readers_.borrow();
  return collect<run>(
    *c, sql_unfinished_runs, "unfinished runs", [&](stmt_use& q) { q.bind(1, node_id); }, read_run);
}

expected<std::optional<std::string>> sqlite_store::find_by_idempotency_key(std::string_view key) {
  if (key.empty())
    return std::optional<std::string>{};
  auto c = readers_.borrow();
  return first_row(collect<std::string>(
    *c, sql_run_by_key, "find by idempotency key", [&](stmt_use& q) { q.bind(1, key); },
    [](const stmt_use& q) { return q.text(0); }));
}

expected<store_stats> sqlite_store::stats() {
  auto c = readers_.borrow();
  auto rows = collect<store_stats>(
    *c, sql_stats, "stats", [](stmt_use&) {},
    [](const stmt_use& q) {
      return store_stats{q.i64(0), q.i64(1), q.i64(2), q.i64(3)};
    });
  if (!rows)
    return rows.error();
  return rows->front();
}

sreh::error sqlite_store::ping() {
  auto c = readers_.borrow();
  auto rows = collect<std::int64_t>(
    *c, sql_ping, "ping", [](stmt_use&) {}, [](const stmt_use& q) { return q.i64(0); });
  return rows ? sreh::error{} : rows.error();
}

} // namespace sqlite

// -- opening -------------------------------------------------------------------------------------

int sqlite_schema_version() {
  return sqlite_migrations().back().version;
}

expected<store_ptr> open_sqlite_store(const sqlite_options& opts) {
  if (auto err = check_options(opts))
    return err;
  constexpr int rw = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  auto writer = connection::open(opts.path, rw, opts.busy_timeout_ms);
  if (!writer)
    return writer.error();
  auto& w = **writer;
  const auto pragmas = fmt::format("PRAGMA journal_mode = WAL; PRAGMA synchronous = {}; "
                                   "PRAGMA foreign_keys = ON;",
                                   opts.synchronous);
  if (auto err = w.exec(pragmas.c_str(), "set pragmas"))
    return err;
  if (auto err = migrate_sqlite(w.db(), opts.path, sqlite_migrations()))
    return err;
  auto last_seq = read_last_seq(w);
  if (!last_seq)
    return last_seq.error();
  auto last_hash = sqlite::read_last_hash(w.db(), opts.path);
  if (!last_hash)
    return last_hash.error();
  std::vector<std::unique_ptr<connection>> readers;
  for (int i = 0; i < opts.reader_connections; ++i) {
    auto r = connection::open(opts.path, SQLITE_OPEN_READWRITE, opts.busy_timeout_ms);
    if (!r)
      return r.error();
    if (auto err = (*r)->exec("PRAGMA query_only = ON;", "set reader pragmas"))
      return err;
    if (int rc = sqlite::register_approval_functions((*r)->db()); rc != SQLITE_OK)
      return sqlite::make_error((*r)->db(), rc, "register functions", opts.path);
    readers.push_back(std::move(*r));
  }
  logger("store")->info("sqlite store {} opened (schema {}, last event seq {}, {} readers, "
                        "synchronous={})",
                        opts.path, sqlite_schema_version(), *last_seq, opts.reader_connections,
                        opts.synchronous);
  return store_ptr{std::make_unique<sqlite::sqlite_store>(std::move(*writer), std::move(readers),
                                                          *last_seq, std::move(*last_hash))};
}

} // namespace sreh::persistence
