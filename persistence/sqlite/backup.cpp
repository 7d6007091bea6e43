// `copy_sqlite_store` and `inspect_sqlite_store`: SQLite's online backup API over one read
// snapshot, and the facts a backup's manifest records.
#include "persistence/sqlite/backup.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <system_error>

#include "persistence/audit/audit.hpp"
#include "persistence/sqlite/statement.hpp"

namespace sreh::persistence {

namespace {

using sqlite::connection;
using sqlite::stmt_use;

/// Pages copied per step: 4 MiB of 4 KiB pages, so progress shows on a large file.
constexpr int pages_per_step = 1'024;

constexpr const char* sql_count_runs = "SELECT count(*) FROM runs";
constexpr const char* sql_newest_event = "SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1";

/// The facts of the store open on `c`, in its current read transaction (or a new one).
expected<sqlite_store_facts> read_facts(connection& c, int version) {
  sqlite_store_facts f;
  f.schema_version = version;
  {
    stmt_use q{c.cached(sql_count_runs)};
    if (q.step() != SQLITE_ROW)
      return c.last_error("count runs");
    f.runs = q.i64(0);
  }
  stmt_use q{c.cached(sql_newest_event)};
  const int rc = q.step();
  if (rc == SQLITE_ROW) {
    f.last_seq = q.i64(0);
    f.last_hash = q.text(1);
  } else if (rc == SQLITE_DONE) {
    f.last_hash = audit_genesis_hash;
  } else {
    return c.last_error("read the newest event");
  }
  return f;
}

void remove_copy(const std::string& dest) {
  std::error_code ec;
  for (const char* suffix : {"", "-journal", "-wal", "-shm"})
    std::filesystem::remove(dest + suffix, ec);
}

/// Copies every page of `src` (in its open read transaction) into `out`.
sreh::error copy_pages(connection& src, connection& out, const copy_progress& progress) {
  sqlite3_backup* b = sqlite3_backup_init(out.db(), "main", src.db(), "main");
  if (b == nullptr)
    return out.last_error("backup: start");
  int rc = SQLITE_OK;
  while (rc == SQLITE_OK) {
    rc = sqlite3_backup_step(b, pages_per_step);
    if (progress && (rc == SQLITE_OK || rc == SQLITE_DONE)) {
      const auto total = sqlite3_backup_pagecount(b);
      progress(total - sqlite3_backup_remaining(b), total);
    }
  }
  // The source is one snapshot and the copy a file of its own: nothing else can make a step
  // busy, so BUSY or LOCKED here is a failure like any other.
  const int step_rc = rc;
  sqlite3_backup_finish(b);
  if (step_rc != SQLITE_DONE)
    return sqlite::make_error(out.db(), step_rc, "backup: copy pages", out.path());
  return out.exec("PRAGMA journal_mode = DELETE", "backup: leave WAL mode");
}

} // namespace

expected<sqlite_store_facts> copy_sqlite_store(const std::string& source, const std::string& dest,
                                               const copy_progress& progress) {
  std::error_code ec;
  if (std::filesystem::exists(dest, ec))
    return sreh::error{errc::conflict, fmt::format("backup: {} exists already", dest)};
  int version = 0;
  auto src = sqlite::open_store_file(source, "backup", version);
  if (!src)
    return src.error();
  // The read transaction begins with the first read below and lasts until the copy is done:
  // the facts and every page copied are of that one snapshot.
  if (auto err = (*src)->exec("BEGIN", "backup: begin"))
    return err;
  auto facts = read_facts(**src, version);
  if (!facts)
    return facts.error();
  auto out = connection::open(dest, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, 5'000);
  if (!out) {
    remove_copy(dest);
    return out.error();
  }
  auto err = copy_pages(**src, **out, progress);
  out->reset();
  if (err) {
    remove_copy(dest);
    return err;
  }
  return facts;
}

expected<sqlite_store_facts> inspect_sqlite_store(const std::string& path) {
  int version = 0;
  auto c = sqlite::open_store_file(path, "inspect", version);
  if (!c)
    return c.error();
  {
    stmt_use q{(*c)->cached("PRAGMA quick_check")};
    const int rc = q.step();
    if (rc != SQLITE_ROW)
      return (*c)->last_error("quick_check");
    if (auto verdict = q.text(0); verdict != "ok")
      return sreh::error{
        errc::invalid_argument,
        fmt::format("{} is damaged: SQLite's quick_check says: {}", path, verdict)};
  }
  if (auto err = (*c)->exec("BEGIN", "inspect: begin"))
    return err;
  return read_facts(**c, version);
}

} // namespace sreh::persistence
