// `verify_audit_chain`: walks the event log of a SQLite file in seq order through the
// dialect-free audit_chain_walk.
#include "persistence/sqlite/audit_verify.hpp"

#include <fmt/format.h>

#include "persistence/audit/audit_chain.hpp"
#include "persistence/sqlite/rows.hpp"
#include "persistence/sqlite/statement.hpp"

namespace sreh::persistence {

namespace {

using sqlite::connection;
using sqlite::stmt_use;

constexpr int first_chained_version = 2;

constexpr const char* sql_chain =
  "SELECT seq, id, run_id, run_seq, kind, at, data, prev_hash, hash FROM events ORDER BY seq";
constexpr const char* sql_seq_after_hash = "SELECT seq FROM events WHERE prev_hash = ?1 LIMIT 1";
constexpr const char* sql_seq_of_hash = "SELECT seq FROM events WHERE hash = ?1 LIMIT 1";

void assign_text(std::string& out, sqlite3_stmt* s, int col) {
  const auto* p = sqlite3_column_text(s, col);
  out.assign(p == nullptr ? "" : reinterpret_cast<const char*>(p),
             static_cast<std::size_t>(sqlite3_column_bytes(s, col)));
}

/// Reads a row of `sql_chain` into `x`, reusing its buffers.
void read_entry(sqlite3_stmt* s, audit_entry& x) {
  x.e.seq = sqlite3_column_int64(s, 0);
  assign_text(x.e.id, s, 1);
  assign_text(x.e.run_id, s, 2);
  x.e.run_seq = sqlite3_column_int64(s, 3);
  assign_text(x.e.kind, s, 4);
  x.e.at = sqlite3_column_int64(s, 5);
  assign_text(x.e.data, s, 6);
  assign_text(x.prev_hash, s, 7);
  assign_text(x.hash, s, 8);
}

/// The entries of the file found by their chain columns (each lookup is a scan).
class file_lookup final : public audit_lookup {
 public:
  explicit file_lookup(connection& c) : c_(c) {}
  std::int64_t seq_after_hash(const std::string& hash) override {
    return seq_where(sql_seq_after_hash, hash);
  }
  std::int64_t seq_of_hash(const std::string& hash) override {
    return seq_where(sql_seq_of_hash, hash);
  }

 private:
  std::int64_t seq_where(const char* sql, const std::string& hash) {
    auto* stmt = c_.cached(sql);
    if (stmt == nullptr)
      return 0;
    stmt_use q{stmt};
    q.bind(1, hash);
    return q.step() == SQLITE_ROW ? q.i64(0) : 0;
  }
  connection& c_;
};

expected<std::unique_ptr<connection>> open_chain(const std::string& path) {
  int version = 0;
  auto c = sqlite::open_store_file(path, "audit", version);
  if (c && version < first_chained_version)
    return sreh::error{errc::invalid_argument,
                       fmt::format("audit: {} has schema version {}, which has no audit chain; "
                                   "open it once with this sreh (serve) to migrate it",
                                   path, version)};
  return c;
}

} // namespace

expected<audit_report> verify_audit_chain(const std::string& sqlite_path,
                                          const audit_progress& progress) {
  auto opened = open_chain(sqlite_path);
  if (!opened)
    return opened.error();
  auto& c = **opened;
  // One read transaction: the total and the walk see the same snapshot while a node writes.
  if (auto err = c.exec("BEGIN", "audit: begin"))
    return err;
  std::int64_t total = 0;
  {
    stmt_use q{c.cached(sqlite::sql_last_seq)};
    if (q.step() != SQLITE_ROW)
      return c.last_error("audit: read last seq");
    total = q.i64(0);
  }
  auto* stmt = c.cached(sql_chain);
  if (stmt == nullptr)
    return c.last_error("audit: read events");
  file_lookup lookup{c};
  audit_chain_walk walk{lookup};
  audit_entry x;
  stmt_use q{stmt};
  int rc;
  while ((rc = q.step()) == SQLITE_ROW) {
    read_entry(stmt, x);
    if (!walk.check(x))
      return walk.take();
    if (progress && walk.done() % audit_progress_every == 0)
      progress(walk.done(), total);
  }
  if (rc != SQLITE_DONE)
    return c.last_error("audit: read events");
  if (progress)
    progress(walk.done(), total);
  return walk.take();
}

} // namespace sreh::persistence
