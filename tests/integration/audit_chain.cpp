// The audit hash chain of the SQLite store: events written through the store verify; entries
// edited, removed or moved behind its back with raw SQL are found and named.
#define CAF_SUITE audit_chain
#include <sqlite3.h>

#include "persistence/sqlite/audit_verify.hpp"
#include "persistence/sqlite/migrations.hpp"
#include "persistence/sqlite/sqlite_store.hpp"
#include "tests/support/caf_test.hpp"
#include "tests/support/store_conformance_fixture.hpp"

using namespace sreh;
using namespace sreh::persistence;
using sreh::test::make_event;
using sreh::test::make_run;
using sreh::test::pad;

namespace {

constexpr int entries = 30;

struct fixture {
  test::temp_dir dir;
  std::string path;
  store_ptr st;

  fixture() {
    if (dir.path().empty())
      CAF_FAIL("mkdtemp failed");
    path = dir.path() + "/sreh.db";
    open();
  }

  void open() {
    st.reset();
    sqlite_options opts;
    opts.path = path;
    auto s = open_sqlite_store(opts);
    if (!s)
      CAF_FAIL("cannot open the store: " << s.error().message);
    st = std::move(*s);
  }

  /// Writes `n` events in commits of a few batches, with data that has newlines and quotes.
  void write_events(int n, int first = 0) {
    int i = first;
    while (i < first + n) {
      std::vector<write_batch> bs;
      for (int b = 0; b < 3 && i < first + n; ++b) {
        write_batch wb;
        const auto run_id = "run_" + pad(i);
        wb.create = make_run(run_id);
        for (int e = 0; e < 1 + b && i < first + n; ++e, ++i) {
          auto ev =
            make_event("evt_" + pad(i), run_id, e + 1, e == 0 ? "run.created" : "node.config");
          ev.data = fmt::format("{{\"i\":{},\"text\":\"a\\nb \\\"c\\\" ✓\"}}\n", i);
          wb.events.push_back(std::move(ev));
        }
        bs.push_back(std::move(wb));
      }
      auto rs = st->commit(bs);
      for (auto& r : rs)
        CAF_REQUIRE_EQUAL(r.err.message, "");
    }
  }

  audit_report verify() {
    auto r = verify_audit_chain(path, {});
    if (!r)
      CAF_FAIL("verify failed: " << r.error().message);
    CAF_MESSAGE(to_string(r->fault)
                << " at " << r->bad_seq << " (" << r->bad_id << "): " << r->message);
    return *r;
  }

  /// Runs SQL on the file behind the store's back; the store is closed first.
  void tamper(const std::string& sql) {
    st.reset();
    sqlite3* db = nullptr;
    CAF_REQUIRE_EQUAL(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    char* msg = nullptr;
    const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &msg);
    if (rc != SQLITE_OK)
      CAF_FAIL("tamper: " << (msg != nullptr ? msg : "?") << " in " << sql);
    sqlite3_free(msg);
    sqlite3_close(db);
  }

  /// One column of one row, read on a raw connection.
  std::string query(const std::string& sql) {
    sqlite3* db = nullptr;
    std::string out;
    CAF_REQUIRE_EQUAL(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK &&
        sqlite3_step(stmt) == SQLITE_ROW && sqlite3_column_text(stmt, 0) != nullptr)
      out = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
    sqlite3_finalize(stmt);
    sqlite3_close(db);
    return out;
  }

  /// The event stored at `seq`, as the store reads it.
  event at(std::int64_t seq) {
    event_filter f;
    f.after_seq = seq - 1;
    f.limit = 1;
    auto evs = st->read_events(f);
    CAF_REQUIRE(evs.has_value());
    CAF_REQUIRE_EQUAL(evs->size(), 1u);
    return evs->front();
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(audit_chain_tests, fixture)

CAF_TEST(an intact chain verifies and its hashes follow the documented formula) {
  auto empty = verify();
  CAF_CHECK(empty.ok());
  CAF_CHECK_EQUAL(empty.entries, 0);
  CAF_CHECK_EQUAL(empty.last_hash, std::string{audit_genesis_hash});
  write_events(entries / 2);
  open(); // the chain goes on from the hash read back at open
  // A failed transaction takes no seq and no hash.
  std::vector<write_batch> bad(1);
  bad[0].update = make_run("run_missing");
  bad[0].events.push_back(make_event("evt_bad", "run_missing", 1));
  CAF_CHECK(static_cast<bool>(st->commit(bad).front().err));
  write_events(entries - entries / 2, entries / 2);
  // Recompute the chain from the store's own reads with the public formula.
  std::string prev{audit_genesis_hash};
  for (std::int64_t seq = 1; seq <= entries; ++seq) {
    auto e = at(seq);
    CAF_CHECK_EQUAL(audit_canonical(seq, e),
                    fmt::format("{}\n{}\n{}\n{}\n{}\n{}\n{}", seq, e.id, e.run_id, e.run_seq,
                                e.kind, e.at, e.data));
    prev = audit_hash(prev, seq, e);
    CAF_CHECK_EQUAL(prev.size(), 64u);
  }
  CAF_CHECK_EQUAL(query("SELECT hash FROM events WHERE seq = " + std::to_string(entries)), prev);
  CAF_CHECK_EQUAL(query("SELECT prev_hash FROM events WHERE seq = 1"),
                  std::string{audit_genesis_hash});
  std::vector<std::pair<std::int64_t, std::int64_t>> calls;
  auto r = verify_audit_chain(
    path, [&calls](std::int64_t done, std::int64_t total) { calls.emplace_back(done, total); });
  CAF_REQUIRE(r.has_value());
  CAF_CHECK(r->ok());
  CAF_CHECK_EQUAL(r->entries, entries);
  CAF_CHECK_EQUAL(r->last_hash, prev);
  CAF_REQUIRE(!calls.empty());
  CAF_CHECK_EQUAL(calls.back().first, entries);
  CAF_CHECK_EQUAL(calls.back().second, entries);
}

CAF_TEST(an edited entry is named as edited) {
  write_events(entries);
  const auto id = at(7).id;
  tamper(R"(UPDATE events SET data = '{"i":999}' WHERE seq = 7)");
  auto r = verify();
  CAF_CHECK_EQUAL(to_string(r.fault), std::string{"edited"});
  CAF_CHECK_EQUAL(r.bad_seq, 7);
  CAF_CHECK_EQUAL(r.bad_id, id);
  CAF_CHECK_EQUAL(r.entries, 6);
  CAF_CHECK_EQUAL(r.last_hash, query("SELECT hash FROM events WHERE seq = 6"));
  CAF_CHECK(r.message.find("does not match") != std::string::npos);
}

CAF_TEST(an edit of any field is found) {
  write_events(entries);
  tamper("UPDATE events SET at = at + 1 WHERE seq = 3; UPDATE events SET kind = 'x' WHERE "
         "seq = 20");
  auto r = verify();
  CAF_CHECK_EQUAL(to_string(r.fault), std::string{"edited"});
  CAF_CHECK_EQUAL(r.bad_seq, 3);
}

CAF_TEST(a removed entry is named by its seq) {
  write_events(entries);
  tamper("DELETE FROM events WHERE seq = 12");
  auto r = verify();
  CAF_CHECK_EQUAL(to_string(r.fault), std::string{"removed"});
  CAF_CHECK_EQUAL(r.bad_seq, 12);
  CAF_CHECK_EQUAL(r.bad_id, "");
  CAF_CHECK_EQUAL(r.entries, 11);
  CAF_CHECK(r.message.find("entry 12 is missing") != std::string::npos);
  tamper("DELETE FROM events WHERE seq IN (1, 2)");
  auto first = verify();
  CAF_CHECK_EQUAL(to_string(first.fault), std::string{"removed"});
  CAF_CHECK_EQUAL(first.bad_seq, 1);
  CAF_CHECK(first.message.find("entries 1..2 are missing") != std::string::npos);
}

CAF_TEST(two swapped entries name the first of them) {
  write_events(entries);
  const auto id10 = at(10).id;
  const auto id20 = at(20).id;
  // The whole rows change places (content and hashes, seq kept): the first is out of place.
  tamper("UPDATE events SET id = 'tmp', seq = -10 WHERE seq = 10;"
         "UPDATE events SET seq = 10 WHERE seq = 20;"
         "UPDATE events SET id = '" +
         id10 + "', seq = 20 WHERE seq = -10;");
  auto moved = verify();
  CAF_CHECK_EQUAL(to_string(moved.fault), std::string{"reordered"});
  CAF_CHECK_EQUAL(moved.bad_seq, 10);
  CAF_CHECK_EQUAL(moved.bad_id, id20);
  CAF_CHECK_EQUAL(moved.entries, 9);
  CAF_CHECK(moved.message.find("belong at seq 20") != std::string::npos);
}

CAF_TEST(two swapped contents with hashes in place name the first as edited) {
  write_events(entries);
  const auto id4 = at(4).id;
  const auto id5 = at(5).id;
  // Adjacent entries swap everything but seq and the chain columns.
  tamper("CREATE TEMP TABLE t AS SELECT * FROM events WHERE seq IN (4, 5);"
         "UPDATE events SET id = 'tmp' || seq WHERE seq IN (4, 5);"
         "UPDATE events SET (id, run_id, run_seq, kind, at, data) = (SELECT id, run_id, run_seq, "
         "kind, at, data FROM t WHERE t.seq = 9 - events.seq) WHERE seq IN (4, 5);");
  auto r = verify();
  CAF_CHECK_EQUAL(to_string(r.fault), std::string{"edited"});
  CAF_CHECK_EQUAL(r.bad_seq, 4);
  CAF_CHECK_EQUAL(r.bad_id, id5);
}

CAF_TEST(a hash rewritten to match an edit breaks the chain at the next entry) {
  write_events(entries);
  auto e = at(15);
  const auto id16 = at(16).id;
  e.data = R"({"i":15,"text":"nothing happened here"})";
  const auto prev = query("SELECT prev_hash FROM events WHERE seq = 15");
  const auto forged = audit_hash(prev, 15, e);
  tamper("UPDATE events SET data = '" + e.data + "', hash = '" + forged + "' WHERE seq = 15");
  auto r = verify();
  CAF_CHECK_EQUAL(to_string(r.fault), std::string{"chain broken"});
  CAF_CHECK_EQUAL(r.bad_seq, 16);
  CAF_CHECK_EQUAL(r.bad_id, id16);
  CAF_CHECK_EQUAL(r.entries, 15);
  CAF_CHECK_EQUAL(r.last_hash, forged);
  CAF_CHECK(r.message.find("entry 15") != std::string::npos);
}

CAF_TEST(a database that cannot be verified is an error naming the file) {
  const auto missing = dir.path() + "/nope.db";
  auto r = verify_audit_chain(missing, {});
  CAF_REQUIRE(!r.has_value());
  CAF_CHECK(r.error().message.find(missing) != std::string::npos);
  // A schema-1 file (before the chain) is named with its version.
  const auto old = dir.path() + "/old.db";
  sqlite3* db = nullptr;
  CAF_REQUIRE_EQUAL(sqlite3_open(old.c_str(), &db), SQLITE_OK);
  CAF_REQUIRE(!migrate_sqlite(db, old, sqlite_migrations().first(1)));
  sqlite3_close(db);
  auto v1 = verify_audit_chain(old, {});
  CAF_REQUIRE(!v1.has_value());
  CAF_MESSAGE(v1.error().message);
  CAF_CHECK(v1.error().message.find("schema version 1") != std::string::npos);
}

CAF_TEST(migration 2 chains the events written before it) {
  const auto old = dir.path() + "/old.db";
  sqlite3* db = nullptr;
  CAF_REQUIRE_EQUAL(sqlite3_open(old.c_str(), &db), SQLITE_OK);
  CAF_REQUIRE(!migrate_sqlite(db, old, sqlite_migrations().first(1)));
  std::string sql = "BEGIN;";
  for (int i = 1; i <= 2'500; ++i) // more than one page of the migration
    sql += fmt::format("INSERT INTO events (seq, id, run_id, run_seq, kind, at, data) VALUES "
                       "({0}, 'evt_{0}', 'run_a', {0}, 'run.created', {0}, '{{\"n\":{0}}}');",
                       i);
  sql += "COMMIT;";
  CAF_REQUIRE_EQUAL(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  path = old;
  open(); // migrates
  write_events(5, 10'000);
  auto r = verify();
  CAF_CHECK(r.ok());
  CAF_CHECK_EQUAL(r.entries, 2'505);
  event e;
  e.id = "evt_1";
  e.run_id = "run_a";
  e.run_seq = 1;
  e.kind = "run.created";
  e.at = 1;
  e.data = R"({"n":1})";
  CAF_CHECK_EQUAL(query("SELECT hash FROM events WHERE seq = 1"),
                  audit_hash(audit_genesis_hash, 1, e));
}

CAF_TEST_FIXTURE_SCOPE_END()
