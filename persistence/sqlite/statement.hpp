#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "core/base/expected.hpp"

namespace sreh::persistence::sqlite {

/// Builds the store's error for a failed SQLite call: "sqlite: <op>: <errmsg> (<file>)".
/// BUSY, LOCKED, IOERR, FULL and CANTOPEN are `unavailable` (the caller may retry later);
/// everything else is `internal`.
[[nodiscard]] sreh::error make_error(sqlite3* db, int rc, std::string_view op,
                                     std::string_view path);

/// A borrowed, prepared statement in use. Binds accumulate the first failure so a sequence of
/// binds needs one check (at `step`). Resets the statement when it goes out of scope, so a
/// cached statement is always ready for the next use. Not thread-safe (like its connection).
class stmt_use {
 public:
  explicit stmt_use(sqlite3_stmt* s) : s_(s) {}
  ~stmt_use() {
    if (s_ != nullptr)
      sqlite3_reset(s_);
  }
  stmt_use(const stmt_use&) = delete;
  stmt_use& operator=(const stmt_use&) = delete;

  // -- binding (1-based parameter index) --------------------------------------------------------
  /// Binds text without copying: `v` must outlive the next `step`.
  stmt_use& bind(int i, std::string_view v) {
    return check(sqlite3_bind_text(s_, i, v.data(), static_cast<int>(v.size()), SQLITE_STATIC));
  }
  /// Binds a copy of `v` (for a value made for this write).
  stmt_use& bind_copy(int i, std::string_view v) {
    return check(sqlite3_bind_text(s_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT));
  }
  stmt_use& bind(int i, const char* v) { return bind(i, std::string_view{v}); }
  stmt_use& bind(int i, std::int64_t v) { return check(sqlite3_bind_int64(s_, i, v)); }
  stmt_use& bind(int i, int v) { return check(sqlite3_bind_int64(s_, i, v)); }
  stmt_use& bind(int i, bool v) { return check(sqlite3_bind_int(s_, i, v ? 1 : 0)); }
  stmt_use& bind(int i, double v) { return check(sqlite3_bind_double(s_, i, v)); }
  /// Binds NULL. (A cached statement keeps its bindings across uses: optional parameters are
  /// bound every time, to a value or to NULL.)
  stmt_use& bind_null(int i) { return check(sqlite3_bind_null(s_, i)); }

  /// SQLITE_ROW, SQLITE_DONE or the first error (including a failed bind).
  [[nodiscard]] int step() { return rc_ != SQLITE_OK ? rc_ : sqlite3_step(s_); }

  // -- columns (0-based) -------------------------------------------------------------------------
  [[nodiscard]] std::int64_t i64(int col) const { return sqlite3_column_int64(s_, col); }
  [[nodiscard]] double f64(int col) const { return sqlite3_column_double(s_, col); }
  [[nodiscard]] std::string text(int col) const {
    const auto* p = sqlite3_column_text(s_, col);
    const auto n = sqlite3_column_bytes(s_, col);
    return p == nullptr
             ? std::string{}
             : std::string(reinterpret_cast<const char*>(p), static_cast<std::size_t>(n));
  }
  [[nodiscard]] bool is_null(int col) const { return sqlite3_column_type(s_, col) == SQLITE_NULL; }

 private:
  stmt_use& check(int rc) {
    if (rc_ == SQLITE_OK)
      rc_ = rc;
    return *this;
  }
  sqlite3_stmt* s_;
  int rc_ = SQLITE_OK;
};

/// One SQLite connection with its cache of persistent prepared statements (keyed by the address
/// of the static SQL text). Not thread-safe: the owner serialises its use.
class connection {
 public:
  /// Opens `path` with `flags` (SQLITE_OPEN_NOMUTEX is added) and sets the busy timeout.
  [[nodiscard]] static expected<std::unique_ptr<connection>> open(const std::string& path,
                                                                  int flags, int busy_timeout_ms);
  ~connection();
  connection(const connection&) = delete;
  connection& operator=(const connection&) = delete;

  [[nodiscard]] sqlite3* db() const { return db_; }
  [[nodiscard]] const std::string& path() const { return path_; }

  /// The cached statement for `sql` (a string with static storage), prepared on first use;
  /// nullptr on failure (then `last_error(op)` describes it).
  [[nodiscard]] sqlite3_stmt* cached(const char* sql);

  /// Runs one or more statements without results (pragmas, BEGIN, DDL).
  [[nodiscard]] sreh::error exec(const char* sql, std::string_view op);

  /// The error for the connection's last failure.
  [[nodiscard]] sreh::error last_error(std::string_view op) const {
    return make_error(db_, sqlite3_extended_errcode(db_), op, path_);
  }

 private:
  connection(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  sqlite3* db_;
  std::string path_;
  std::unordered_map<const char*, sqlite3_stmt*> stmts_;
};

/// Opens the sreh store file `path` read-only for a command (`audit verify`, `backup`), with its
/// schema version in `version`. An error starting with `op` names the file when it is missing,
/// not SQLite or holds no sreh schema.
[[nodiscard]] expected<std::unique_ptr<connection>>
open_store_file(const std::string& path, std::string_view op, int& version);

} // namespace sreh::persistence::sqlite
