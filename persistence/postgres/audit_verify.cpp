// `verify_postgres_audit_chain`: walks the event log of a PostgreSQL store in seq order through
// the dialect-free audit_chain_walk, as persistence/sqlite/audit_verify.cpp does for a file.
#include "persistence/postgres/audit_verify.hpp"

#include <fmt/format.h>
#include <pqxx/pqxx>

#include "persistence/audit/audit_chain.hpp"
#include "persistence/postgres/connection.hpp"
#include "persistence/postgres/rows.hpp"
#include "persistence/store/row_columns.hpp"

namespace sreh::persistence {

namespace {

constexpr int first_chained_version = 2;
constexpr int page_rows = 4'096;

constexpr const char* sql_declare =
  "DECLARE audit_walk NO SCROLL CURSOR FOR SELECT " SREH_EVENT_COLUMNS
  ", prev_hash, hash FROM events ORDER BY seq";
constexpr const char* sql_fetch = "FETCH FORWARD 4096 FROM audit_walk";
static_assert(page_rows == 4'096, "sql_fetch spells the page size");

/// The entries of the store found by their chain columns, in the walk's snapshot.
class store_lookup final : public audit_lookup {
 public:
  explicit store_lookup(pqxx::transaction_base& tx) : tx_(tx) {}
  std::int64_t seq_after_hash(const std::string& hash) override {
    return seq_where("prev_hash", hash);
  }
  std::int64_t seq_of_hash(const std::string& hash) override { return seq_where("hash", hash); }

 private:
  std::int64_t seq_where(const char* column, const std::string& hash) {
    const auto r =
      tx_.exec_params(fmt::format("SELECT seq FROM events WHERE {} = $1 LIMIT 1", column), hash);
    return r.empty() ? 0 : r[0][0].as<std::int64_t>();
  }
  pqxx::transaction_base& tx_;
};

/// The store's schema version, or an error saying why its chain cannot be verified.
sreh::error check_version(pqxx::transaction_base& tx, const std::string& where) {
  if (tx.exec1("SELECT to_regclass('schema_version') IS NULL")[0].as<bool>())
    return {errc::not_found,
            fmt::format("audit: {} holds no sreh store (no schema_version table)", where)};
  const int version = tx.exec1("SELECT coalesce(max(version), 0) FROM schema_version")[0].as<int>();
  if (version < first_chained_version)
    return {errc::invalid_argument,
            fmt::format("audit: {} has schema version {}, which has no audit chain; start a node "
                        "of this sreh on it once to migrate it",
                        where, version)};
  return {};
}

expected<audit_report> walk_chain(pqxx::transaction_base& tx, const std::string& where,
                                  const audit_progress& progress) {
  if (auto err = check_version(tx, where))
    return err;
  const auto total = tx.exec1("SELECT coalesce(max(seq), 0) FROM events")[0].as<std::int64_t>();
  tx.exec0(sql_declare);
  store_lookup lookup{tx};
  audit_chain_walk walk{lookup};
  audit_entry x;
  for (;;) {
    const auto page = tx.exec(sql_fetch);
    if (page.empty())
      break;
    for (const auto& row : page) {
      x.e = pg::read_event(row);
      x.prev_hash = pg::text(row[7]);
      x.hash = pg::text(row[8]);
      if (!walk.check(x))
        return walk.take();
      if (progress && walk.done() % audit_progress_every == 0)
        progress(walk.done(), total);
    }
  }
  if (progress)
    progress(walk.done(), total);
  return walk.take();
}

} // namespace

expected<audit_report> verify_postgres_audit_chain(const std::string& url,
                                                   const std::string& schema,
                                                   const audit_progress& progress) {
  const auto where = pg::describe_url(url) + (schema.empty() ? "" : " (schema " + schema + ")");
  try {
    auto c = pg::open_connection(url, schema);
    // Repeatable read: the total, the cursor and the lookups all see one snapshot.
    pqxx::transaction<pqxx::isolation_level::repeatable_read, pqxx::readwrite_policy::read_only> tx{
      *c, "audit"};
    auto report = walk_chain(tx, where, progress);
    tx.commit();
    return report;
  } catch (...) {
    bool broken = false;
    return pg::current_error(fmt::format("audit: {}", where), broken);
  }
}

} // namespace sreh::persistence
