#define CAF_SUITE persistence_migrations
#include <sqlite3.h>

#include <array>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "persistence/postgres/postgres_store.hpp"
#include "persistence/sqlite/audit_verify.hpp"
#include "persistence/sqlite/migrations.hpp"
#include "persistence/sqlite/rows.hpp"
#include "persistence/sqlite/sqlite_store.hpp"
#include "persistence/store/schema_versions.hpp"
#include "tests/support/caf_test.hpp"

using namespace sreh;
using namespace sreh::persistence;

namespace {

/// A fresh temp directory with a database path in it; removed at the end of the test.
struct fixture {
  std::string dir;
  std::string path;

  fixture() {
    std::string tmpl = "/tmp/sreh-migrations-XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr)
      CAF_FAIL("mkdtemp failed");
    dir = tmpl;
    path = dir + "/sreh.db";
  }
  ~fixture() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }

  /// Runs `sql` on the database file directly and returns the first column of the first row.
  std::string query(const std::string& sql) {
    sqlite3* db = nullptr;
    std::string out;
    if (sqlite3_open(path.c_str(), &db) == SQLITE_OK) {
      sqlite3_stmt* stmt = nullptr;
      if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK &&
          sqlite3_step(stmt) == SQLITE_ROW && sqlite3_column_text(stmt, 0) != nullptr)
        out = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
      else
        out = std::string{"error: "} + sqlite3_errmsg(db);
      sqlite3_finalize(stmt);
    }
    sqlite3_close(db);
    return out;
  }

  expected<store_ptr> open() {
    sqlite_options opts;
    opts.path = path;
    return open_sqlite_store(opts);
  }

  /// The rows of EXPLAIN (or EXPLAIN QUERY PLAN) `sql` whose column `col` contains `word`.
  int explain_count(const std::string& sql, int col, std::string_view word) {
    sqlite3* db = nullptr;
    sqlite3_stmt* stmt = nullptr;
    int n = 0;
    if (sqlite3_open(path.c_str(), &db) == SQLITE_OK &&
        sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK)
      while (sqlite3_step(stmt) == SQLITE_ROW)
        if (const auto* t = sqlite3_column_text(stmt, col);
            t != nullptr &&
            std::string_view{reinterpret_cast<const char*>(t)}.find(word) != std::string_view::npos)
          ++n;
    sqlite3_finalize(stmt);
    sqlite3_close(db);
    return n;
  }

  /// Runs `sql` on the database file directly; "" or the error message.
  std::string exec(const std::string& sql) {
    sqlite3* db = nullptr;
    std::string out;
    if (sqlite3_open(path.c_str(), &db) == SQLITE_OK &&
        sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK)
      out = sqlite3_errmsg(db);
    sqlite3_close(db);
    return out;
  }

  /// Makes the file a database of `migrations` (as a build that knew only those left it).
  void make_old(std::span<const sqlite_migration> migrations) {
    sqlite3* db = nullptr;
    CAF_REQUIRE_EQUAL(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    auto err = migrate_sqlite(db, path, migrations);
    sqlite3_close(db);
    CAF_REQUIRE_EQUAL(err.message, "");
  }

  /// A run and its first event, written as a build of any version 2..4 wrote them.
  void write_old_rows() {
    event e;
    e.id = "evt_old";
    e.run_id = "run_old";
    e.run_seq = 1;
    e.kind = "run.created";
    e.at = 1'700'000'000'000'000;
    const auto hash = audit_hash(audit_genesis_hash, 1, e);
    CAF_REQUIRE_EQUAL(
      exec("INSERT INTO runs (id, goal, state, waiting_for, submitter, idempotency_key, node_id, "
           "created_at, updated_at, steps, tokens, max_steps, max_tokens, deadline_us, "
           "max_result_bytes, checkpoint, conclusion, error, labels) "
           "VALUES ('run_old', 'an old goal', 'running', 'none', 'alice', "
           "'key-old', 'n1', 1, 1, 0, 0, 50, 200000, 0, 65536, '{}', '', '', '{}');"
           "INSERT INTO events (seq, id, run_id, run_seq, kind, at, data, prev_hash, hash) "
           "VALUES (1, 'evt_old', 'run_old', 1, 'run.created', 1700000000000000, '{}', '" +
           std::string{audit_genesis_hash} + "', '" + hash + "');"),
      "");
  }

  /// Opens the file with this build and checks that it reached the shared numbering with the
  /// old rows readable and the audit chain going on from them.
  void check_opens_at_latest() {
    {
      auto st = open();
      CAF_REQUIRE_EQUAL(st ? std::string{} : st.error().message, "");
      auto old = (*st)->get_run("run_old");
      CAF_REQUIRE(old.has_value());
      CAF_REQUIRE(old->has_value());
      CAF_CHECK_EQUAL((*old)->goal, "an old goal");
      CAF_CHECK_EQUAL((*st)->find_by_idempotency_key("key-old")->value_or(""), "run_old");
      step intent;
      intent.run_id = "run_old";
      intent.n = 1;
      intent.started_at = 10;
      std::vector<write_batch> bs(1);
      bs[0].steps.push_back(intent);
      event e;
      e.id = "evt_new";
      e.run_id = "run_old";
      e.run_seq = 2;
      e.kind = "step.intent";
      bs[0].events.push_back(e);
      auto rs = (*st)->commit(bs);
      CAF_REQUIRE_EQUAL(rs.front().err.message, "");
      CAF_CHECK_EQUAL(rs.front().events.at(0).seq, 2);
      CAF_CHECK_EQUAL((*st)->rate_counted_tool_steps(0)->size(), 1u);
    }
    CAF_CHECK_EQUAL(query("SELECT max(version) FROM schema_version"),
                    std::to_string(latest_schema_version));
    CAF_CHECK_EQUAL(query("SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = "
                          "'steps_tool_open'"),
                    "1");
    auto chain = verify_audit_chain(path, {});
    CAF_REQUIRE(chain.has_value());
    CAF_CHECK(chain->ok());
    CAF_CHECK_EQUAL(chain->entries, 2);
  }
};

/// The SQLite migrations of the builds before the numbering was shared: 1-3 as today, 4 the
/// index of running tool intents (PostgreSQL's 5, and now everyone's).
std::array<sqlite_migration, 4> previous_numbering() {
  const auto now = sqlite_migrations();
  return {{now[0],
           now[1],
           now[2],
           {4,
            "CREATE INDEX steps_tool_open ON steps(started_at) "
            "WHERE kind = 'tool' AND state = 'intent';",
            nullptr}}};
}

} // namespace

CAF_TEST_FIXTURE_SCOPE(persistence_migrations_tests, fixture)

CAF_TEST(a fresh database is migrated to the version of this build) {
  CAF_REQUIRE(sqlite_schema_version() >= 1);
  CAF_CHECK_EQUAL(sqlite_schema_version(), sqlite_migrations().back().version);
  {
    auto st = open();
    CAF_REQUIRE(st.has_value());
  }
  CAF_CHECK_EQUAL(query("SELECT max(version) FROM schema_version"),
                  std::to_string(sqlite_schema_version()));
  CAF_CHECK_EQUAL(query("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN "
                        "('runs', 'steps', 'events', 'approvals')"),
                  "4");
  CAF_CHECK_EQUAL(query("SELECT count(*) FROM pragma_table_info('events') WHERE name IN "
                        "('prev_hash', 'hash')"),
                  "2");
  CAF_CHECK_EQUAL(query("SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name IN "
                        "('approvals_state', 'approvals_run_step', 'steps_tool_finished', "
                        "'steps_tool_open')"),
                  "4");
  CAF_CHECK_EQUAL(query("PRAGMA journal_mode"), "wal");
}

CAF_TEST(reopening applies nothing twice) {
  for (int i = 0; i < 3; ++i) {
    auto st = open();
    CAF_REQUIRE(st.has_value());
  }
  CAF_CHECK_EQUAL(query("SELECT count(*) FROM schema_version"),
                  std::to_string(sqlite_migrations().size()));
}

CAF_TEST(a newer schema is refused naming the file and both versions) {
  {
    auto st = open();
    CAF_REQUIRE(st.has_value());
  }
  const int newer = sqlite_schema_version() + 7;
  CAF_CHECK_EQUAL(query("INSERT INTO schema_version (version, applied_at) VALUES (" +
                        std::to_string(newer) + ", 0) RETURNING version"),
                  std::to_string(newer));
  auto st = open();
  CAF_REQUIRE(!st.has_value());
  const auto& msg = st.error().message;
  CAF_MESSAGE("error: " << msg);
  CAF_CHECK(msg.find(path) != std::string::npos);
  CAF_CHECK(msg.find(std::to_string(newer)) != std::string::npos);
  CAF_CHECK(msg.find("(" + std::to_string(sqlite_schema_version()) + ")") != std::string::npos);
}

CAF_TEST(a failing migration leaves the previous version) {
  sqlite3* db = nullptr;
  CAF_REQUIRE_EQUAL(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  const std::array<sqlite_migration, 2> good{
    {{1, "CREATE TABLE a (x INTEGER)"}, {2, "CREATE TABLE b (y INTEGER)"}}};
  const std::array<sqlite_migration, 3> bad{{good[0],
                                             good[1],
                                             {3, "CREATE TABLE c (z INTEGER); "
                                                 "INSERT INTO no_such_table VALUES (1)"}}};
  CAF_CHECK(!migrate_sqlite(db, path, std::span{good}.first(1)));
  CAF_CHECK_EQUAL(sqlite_database_version(db), 1);
  auto err = migrate_sqlite(db, path, bad);
  CAF_CHECK(static_cast<bool>(err));
  CAF_MESSAGE("error: " << err.message);
  CAF_CHECK(err.message.find("migration 3") != std::string::npos);
  CAF_CHECK(err.message.find("no_such_table") != std::string::npos);
  CAF_CHECK_EQUAL(sqlite_database_version(db), 2); // 2 applied, 3 rolled back
  sqlite3_close(db);
  CAF_CHECK_EQUAL(query("SELECT count(*) FROM sqlite_master WHERE name = 'c'"), "0");
  CAF_CHECK_EQUAL(query("SELECT count(*) FROM sqlite_master WHERE name = 'b'"), "1");
}

CAF_TEST(a failing step after the script rolls the script back) {
  sqlite3* db = nullptr;
  CAF_REQUIRE_EQUAL(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  const std::array<sqlite_migration, 2> ms{{
    {1, "CREATE TABLE a (x INTEGER)", nullptr},
    {2, "CREATE TABLE b (y INTEGER)",
     [](sqlite3*, std::string_view p) {
       return sreh::error{errc::internal, "step failed on " + std::string{p}};
     }},
  }};
  auto err = migrate_sqlite(db, path, ms);
  CAF_CHECK_EQUAL(err.message, "step failed on " + path);
  CAF_CHECK_EQUAL(sqlite_database_version(db), 1);
  sqlite3_close(db);
  CAF_CHECK_EQUAL(query("SELECT count(*) FROM sqlite_master WHERE name = 'b'"), "0");
}

CAF_TEST(every store numbers its schema versions the same) {
  CAF_CHECK_EQUAL(sqlite_schema_version(), latest_schema_version);
  CAF_CHECK_EQUAL(postgres_schema_version(), latest_schema_version);
  CAF_CHECK_EQUAL(sqlite_migrations().size(), schema_history.size());
}

CAF_TEST(a file of the previous numbering opens and moves to the shared one) {
  const auto old = previous_numbering();
  make_old(old);
  CAF_REQUIRE_EQUAL(query("SELECT max(version) FROM schema_version"), "4");
  write_old_rows();
  check_opens_at_latest();
  CAF_CHECK_EQUAL(query("SELECT group_concat(version) FROM schema_version"),
                  "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15");
}

CAF_TEST(a file at version 6 gets run kinds at version 7 and its runs read as goal runs) {
  make_old(sqlite_migrations().first(6));
  write_old_rows();
  check_opens_at_latest();
  auto st = open();
  CAF_REQUIRE(st.has_value());
  auto old = (*st)->get_run("run_old");
  CAF_REQUIRE(old.has_value() && old->has_value());
  CAF_CHECK_EQUAL((*old)->kind, "goal");
  CAF_CHECK_EQUAL((*old)->parent, "");
  CAF_CHECK_EQUAL((*old)->spec, "{}");
}

CAF_TEST(a file at version 9 gets long term memory and its full text index at version 10) {
  make_old(sqlite_migrations().first(9));
  auto st = open();
  CAF_REQUIRE(st.has_value());
  CAF_CHECK_EQUAL(query("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN "
                        "('memories', 'memory_versions', 'memory_text')"),
                  "3");
  auto e = memory::create(memory::draft{memory::kind::note, "restarted the pool", {}, {}, {}},
                          "mem_1", "alice", 1);
  CAF_REQUIRE(e.has_value());
  std::vector<persistence::write_batch> bs(1);
  bs[0].memories.push_back(*e);
  const auto results = (*st)->commit(bs);
  CAF_REQUIRE_EQUAL(results.front().err.message, "");
  auto found = (*st)->search_memories(memory::query{"restarts", {}, {}, {}, {}, 10});
  CAF_REQUIRE(found.has_value());
  CAF_CHECK_EQUAL(found->size(), 1u);
}

CAF_TEST(a file at version 10 gets the quality score at version 11 and its runs have none) {
  make_old(sqlite_migrations().first(10));
  write_old_rows();
  check_opens_at_latest();
  auto st = open();
  CAF_REQUIRE(st.has_value());
  auto old = (*st)->get_run("run_old");
  CAF_REQUIRE(old.has_value() && old->has_value());
  CAF_CHECK_EQUAL((*old)->quality, "");
  auto r = **old;
  r.quality = R"({"total":70,"parts":[]})";
  std::vector<persistence::write_batch> bs(1);
  bs[0].update = r;
  const auto results = (*st)->commit(bs);
  CAF_REQUIRE_EQUAL(results.front().err.message, "");
  auto back = (*st)->get_run("run_old");
  CAF_REQUIRE(back.has_value() && back->has_value());
  CAF_CHECK_EQUAL((*back)->quality, r.quality);
}

CAF_TEST(a file at version 11 gets the evolution candidates at version 12) {
  make_old(sqlite_migrations().first(11));
  CAF_REQUIRE_EQUAL(query("SELECT count(*) FROM sqlite_master WHERE name = 'candidates'"), "0");
  write_old_rows();
  check_opens_at_latest();
  CAF_CHECK_EQUAL(query("SELECT count(*) FROM sqlite_master WHERE (type = 'table' AND name = "
                        "'candidates') OR (type = 'index' AND name = 'candidates_newest')"),
                  "2");
  auto st = open();
  CAF_REQUIRE(st.has_value());
  evolve::candidate c;
  c.id = "cnd_1";
  c.proposer = "alice";
  c.created_at = 1'700'000'000'000'000;
  std::vector<persistence::write_batch> bs(1);
  bs[0].candidates.push_back(c);
  const auto results = (*st)->commit(bs);
  CAF_REQUIRE_EQUAL(results.front().err.message, "");
  auto back = (*st)->get_candidate("cnd_1");
  CAF_REQUIRE(back.has_value() && back->has_value());
  CAF_CHECK_EQUAL((*back)->proposer, "alice");
  CAF_CHECK_EQUAL(query("SELECT kind || ' ' || state FROM candidates WHERE id = 'cnd_1'"),
                  "knowledge_base evaluating");
}

CAF_TEST(a file at version 12 gets the runs conversations at version 13) {
  make_old(sqlite_migrations().first(12));
  CAF_REQUIRE_EQUAL(query("SELECT count(*) FROM sqlite_master WHERE name = 'messages'"), "0");
  write_old_rows();
  check_opens_at_latest();
  auto st = open();
  CAF_REQUIRE(st.has_value());
  conversation::message m;
  m.id = "msg_1";
  m.run_id = "run_old"; // a run written before the table existed
  m.seq = 1;
  m.author = "alice";
  m.text = "leave payments-db alone";
  m.at = 1'700'000'000'000'000;
  std::vector<persistence::write_batch> bs(1);
  bs[0].messages.push_back(m);
  const auto results = (*st)->commit(bs);
  CAF_REQUIRE_EQUAL(results.front().err.message, "");
  auto untaken = (*st)->untaken_messages("run_old");
  CAF_REQUIRE(untaken.has_value());
  CAF_REQUIRE_EQUAL(untaken->size(), 1u);
  CAF_CHECK_EQUAL(untaken->front().text, m.text);
}

CAF_TEST(a file at version 13 gets the unfinished runs index without an IN list at version 14) {
  make_old(sqlite_migrations().first(13));
  const std::string update = "EXPLAIN UPDATE runs SET state = 'succeeded' WHERE id = 'run_old'";
  // Before: the index's IN list is built as a temporary table for the old and the new row.
  CAF_CHECK_EQUAL(explain_count(update, 1, "OpenEphemeral"), 2);
  write_old_rows();
  check_opens_at_latest();
  CAF_CHECK_EQUAL(explain_count(update, 1, "OpenEphemeral"), 0);
  CAF_CHECK_EQUAL(explain_count(std::string{"EXPLAIN QUERY PLAN "} + sqlite::sql_unfinished_runs, 3,
                                "USING INDEX runs_unfinished"),
                  1);
  auto st = open();
  CAF_REQUIRE(st.has_value());
  auto unfinished = (*st)->unfinished_runs("n1");
  CAF_REQUIRE(unfinished.has_value());
  CAF_REQUIRE_EQUAL(unfinished->size(), 1u);
  CAF_CHECK_EQUAL(unfinished->front().id, "run_old");
}

CAF_TEST(a file at version 5 gets the Works and world tables at version 6) {
  make_old(sqlite_migrations().first(5));
  CAF_REQUIRE_EQUAL(query("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN "
                          "('works', 'work_templates', 'world_entities', 'world_history')"),
                    "0");
  write_old_rows();
  check_opens_at_latest();
  CAF_CHECK_EQUAL(query("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN "
                        "('works', 'work_templates', 'world_entities', 'world_history')"),
                  "4");
}

CAF_TEST(a file at version 3 gets the index of running intents at version 5) {
  make_old(sqlite_migrations().first(3));
  CAF_REQUIRE_EQUAL(query("SELECT count(*) FROM sqlite_master WHERE name = 'steps_tool_open'"),
                    "0");
  write_old_rows();
  check_opens_at_latest();
}

CAF_TEST(bad options are refused) {
  sqlite_options o;
  o.path = ":memory:";
  CAF_CHECK_EQUAL(static_cast<int>(open_sqlite_store(o).error().code),
                  static_cast<int>(errc::invalid_argument));
  o.path = path;
  o.synchronous = "off";
  auto e = open_sqlite_store(o);
  CAF_REQUIRE(!e.has_value());
  CAF_CHECK(e.error().message.find("synchronous 'off'") != std::string::npos);
  o.synchronous = "full";
  o.reader_connections = 0;
  CAF_CHECK(!open_sqlite_store(o).has_value());
  o.reader_connections = 2;
  CAF_CHECK(open_sqlite_store(o).has_value());
  o.path = dir + "/missing/dir/sreh.db";
  auto missing = open_sqlite_store(o);
  CAF_REQUIRE(!missing.has_value());
  CAF_CHECK(missing.error().message.find(o.path) != std::string::npos);
}

CAF_TEST_FIXTURE_SCOPE_END()
