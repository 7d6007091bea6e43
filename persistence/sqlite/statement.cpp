#include "persistence/sqlite/statement.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <system_error>

#include "persistence/sqlite/migrations.hpp"

namespace sreh::persistence::sqlite {

sreh::error make_error(sqlite3* db, int rc, std::string_view op, std::string_view path) {
  const char* msg = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  switch (rc & 0xff) {
  case SQLITE_BUSY:
  case SQLITE_LOCKED:
  case SQLITE_IOERR:
  case SQLITE_FULL:
  case SQLITE_CANTOPEN:
    return {errc::unavailable, fmt::format("sqlite: {}: {} ({})", op, msg, path)};
  default:
    return {errc::internal, fmt::format("sqlite: {}: {} ({})", op, msg, path)};
  }
}

expected<std::unique_ptr<connection>> connection::open(const std::string& path, int flags,
                                                       int busy_timeout_ms) {
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &db, flags | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    auto err = make_error(db, rc, "open", path);
    sqlite3_close_v2(db); // a handle is returned even on most failures
    return err;
  }
  sqlite3_extended_result_codes(db, 1);
  sqlite3_busy_timeout(db, busy_timeout_ms);
  return std::unique_ptr<connection>(new connection(db, path));
}

connection::~connection() {
  for (auto& [sql, stmt] : stmts_)
    sqlite3_finalize(stmt);
  sqlite3_close_v2(db_);
}

sqlite3_stmt* connection::cached(const char* sql) {
  if (auto it = stmts_.find(sql); it != stmts_.end())
    return it->second;
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v3(db_, sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt, nullptr) != SQLITE_OK)
    return nullptr;
  stmts_.emplace(sql, stmt);
  return stmt;
}

sreh::error connection::exec(const char* sql, std::string_view op) {
  const int rc = sqlite3_exec(db_, sql, nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK)
    return make_error(db_, rc, op, path_);
  return {};
}

expected<std::unique_ptr<connection>> open_store_file(const std::string& path, std::string_view op,
                                                      int& version) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    return sreh::error{errc::not_found, fmt::format("{}: no database file at {}", op, path)};
  auto c = connection::open(path, SQLITE_OPEN_READONLY, 5'000);
  if (!c)
    return c.error();
  version = sqlite_database_version((*c)->db());
  if (version <= 0)
    return sreh::error{
      errc::invalid_argument,
      fmt::format("{}: {} is not a sreh database ({})", op, path,
                  version == 0 ? "no schema version recorded" : sqlite3_errmsg((*c)->db()))};
  return c;
}

} // namespace sreh::persistence::sqlite
