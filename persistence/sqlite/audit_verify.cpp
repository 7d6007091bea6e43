// `verify_audit_chain`: walks the event log of a SQLite file in seq order and checks each entry
// against its own hash and against the previous entry's hash.
#include <fmt/format.h>

#include <filesystem>
#include <system_error>

#include "persistence/audit/audit.hpp"
#include "persistence/audit/audit_hasher.hpp"
#include "persistence/sqlite/migrations.hpp"
#include "persistence/sqlite/rows.hpp"
#include "persistence/sqlite/statement.hpp"

namespace sreh::persistence {

namespace {

using sqlite::connection;
using sqlite::stmt_use;

constexpr int first_chained_version = 2;
constexpr std::int64_t progress_every = 16'384;

constexpr const char* sql_chain =
  "SELECT seq, id, run_id, run_seq, kind, at, data, prev_hash, hash FROM events ORDER BY seq";
constexpr const char* sql_seq_after_hash = "SELECT seq FROM events WHERE prev_hash = ?1 LIMIT 1";
constexpr const char* sql_seq_of_hash = "SELECT seq FROM events WHERE hash = ?1 LIMIT 1";

void assign_text(std::string& out, sqlite3_stmt* s, int col) {
  const auto* p = sqlite3_column_text(s, col);
  out.assign(p == nullptr ? "" : reinterpret_cast<const char*>(p),
             static_cast<std::size_t>(sqlite3_column_bytes(s, col)));
}

/// An entry as stored: the event and its two chain columns.
struct entry {
  event e;
  std::string prev_hash;
  std::string hash;

  void read(sqlite3_stmt* s) {
    e.seq = sqlite3_column_int64(s, 0);
    assign_text(e.id, s, 1);
    assign_text(e.run_id, s, 2);
    e.run_seq = sqlite3_column_int64(s, 3);
    assign_text(e.kind, s, 4);
    e.at = sqlite3_column_int64(s, 5);
    assign_text(e.data, s, 6);
    assign_text(prev_hash, s, 7);
    assign_text(hash, s, 8);
  }
};

std::string_view short_hash(std::string_view h) {
  return h.substr(0, 12);
}

/// The walk over the chain: the last good entry and the verdict on the next one.
class chain_walk {
 public:
  explicit chain_walk(connection& c) : c_(c) { report_.last_hash = audit_genesis_hash; }

  /// Checks the next entry; false when it is bad (the report then names it).
  bool check(const entry& x) {
    if (x.e.seq != last_seq_ + 1)
      return fail(audit_fault::removed, last_seq_ + 1, "", removed_message(x));
    const auto computed = std::string{hasher_.next(x.prev_hash, x.e.seq, x.e)};
    if (computed != x.hash) {
      if (auto at = home_of(x); at > 0)
        return fail(audit_fault::reordered, x.e.seq, x.e.id,
                    fmt::format("this entry and its hash belong at seq {} (moved)", at));
      return fail(audit_fault::edited, x.e.seq, x.e.id,
                  fmt::format("its content does not match its stored hash {}… (recomputed {}…)",
                              short_hash(x.hash), short_hash(computed)));
    }
    if (x.prev_hash != report_.last_hash)
      return fail(audit_fault::chain_broken, x.e.seq, x.e.id,
                  fmt::format("it matches its own hash, but its prev_hash {}… is not the hash "
                              "{}… of {} — an earlier entry was rewritten or replaced",
                              short_hash(x.prev_hash), short_hash(report_.last_hash),
                              last_seq_ == 0 ? std::string{"the genesis"}
                                             : fmt::format("entry {} ({})", last_seq_, last_id_)));
    last_seq_ = x.e.seq;
    last_id_ = x.e.id;
    report_.last_hash = x.hash;
    ++report_.entries;
    return true;
  }

  [[nodiscard]] std::int64_t done() const { return report_.entries; }
  audit_report take() { return std::move(report_); }

 private:
  bool fail(audit_fault f, std::int64_t seq, std::string id, std::string message) {
    report_.fault = f;
    report_.bad_seq = seq;
    report_.bad_id = std::move(id);
    report_.message = std::move(message);
    return false;
  }

  std::string removed_message(const entry& x) const {
    const auto missing = last_seq_ + 1;
    const auto range = x.e.seq - 1 == missing
                         ? fmt::format("entry {} is missing", missing)
                         : fmt::format("entries {}..{} are missing", missing, x.e.seq - 1);
    if (last_seq_ == 0)
      return fmt::format("{}: the log starts at {} ({})", range, x.e.seq, x.e.id);
    return fmt::format("{}: the log goes from {} ({}) to {} ({})", range, last_seq_, last_id_,
                       x.e.seq, x.e.id);
  }

  /// Where a whole entry (content and hashes) that does not match its position came from: the
  /// seq before the entry that names its hash as prev_hash, or after the entry whose hash is its
  /// prev_hash, if its content hashes right there; 0 when neither (then it was edited). Runs only
  /// on the first bad entry (each lookup is a scan).
  std::int64_t home_of(const entry& x) {
    std::int64_t candidates[2] = {0, 0};
    if (auto after = seq_where(sql_seq_after_hash, x.hash); after > 1)
      candidates[0] = after - 1;
    if (x.prev_hash == audit_genesis_hash)
      candidates[1] = 1;
    else if (auto before = seq_where(sql_seq_of_hash, x.prev_hash); before > 0)
      candidates[1] = before + 1;
    for (auto at : candidates)
      if (at > 0 && at != x.e.seq && hasher_.next(x.prev_hash, at, x.e) == x.hash)
        return at;
    return 0;
  }

  std::int64_t seq_where(const char* sql, const std::string& hash) {
    auto* stmt = c_.cached(sql);
    if (stmt == nullptr || hash.empty())
      return 0;
    stmt_use q{stmt};
    q.bind(1, hash);
    return q.step() == SQLITE_ROW ? q.i64(0) : 0;
  }

  connection& c_;
  audit_hasher hasher_;
  audit_report report_;
  std::int64_t last_seq_ = 0;
  std::string last_id_;
};

expected<std::unique_ptr<connection>> open_chain(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    return sreh::error{errc::not_found, fmt::format("audit: no database file at {}", path)};
  auto c = connection::open(path, SQLITE_OPEN_READONLY, 5'000);
  if (!c)
    return c.error();
  const int version = sqlite_database_version((*c)->db());
  if (version < 0)
    return sreh::error{errc::invalid_argument,
                       fmt::format("audit: {} is not a sreh database (no schema_version: {})", path,
                                   sqlite3_errmsg((*c)->db()))};
  if (version < first_chained_version)
    return sreh::error{errc::invalid_argument,
                       fmt::format("audit: {} has schema version {}, which has no audit chain; "
                                   "open it once with this sreh (serve) to migrate it",
                                   path, version)};
  return c;
}

} // namespace

const char* to_string(audit_fault f) {
  switch (f) {
  case audit_fault::none:
    return "ok";
  case audit_fault::edited:
    return "edited";
  case audit_fault::removed:
    return "removed";
  case audit_fault::reordered:
    return "reordered";
  case audit_fault::chain_broken:
    return "chain broken";
  }
  return "unknown";
}

expected<audit_report>
verify_audit_chain(const std::string& sqlite_path,
                   const std::function<void(std::int64_t done, std::int64_t total)>& progress) {
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
  chain_walk walk{c};
  entry x;
  stmt_use q{stmt};
  int rc;
  while ((rc = q.step()) == SQLITE_ROW) {
    x.read(stmt);
    if (!walk.check(x))
      return walk.take();
    if (progress && walk.done() % progress_every == 0)
      progress(walk.done(), total);
  }
  if (rc != SQLITE_DONE)
    return c.last_error("audit: read events");
  if (progress)
    progress(walk.done(), total);
  return walk.take();
}

} // namespace sreh::persistence
