// What the in-memory store adds to the store contract (which the conformance suites check as
// integration.in_memory.*): the audit chain of the SQLite store, contents shared by the stores made
// on them, and injected failures for the callers' error paths.
#define CAF_SUITE persistence_in_memory_store
#include <sqlite3.h>

#include <string>
#include <vector>

#include "persistence/audit/audit.hpp"
#include "persistence/sqlite/sqlite_store.hpp"
#include "persistence/store/in_memory_store.hpp"
#include "tests/support/caf_test.hpp"
#include "tests/support/store_conformance_fixture.hpp"

using namespace sreh;
using namespace sreh::persistence;
using sreh::test::create_batch;
using sreh::test::make_approval;
using sreh::test::make_event;
using sreh::test::pad;

namespace {

/// Three commits of several runs with several events each, one of them failing.
void write_history(store& st) {
  for (int c = 0; c < 3; ++c) {
    std::vector<write_batch> bs;
    for (int b = 0; b < 3; ++b) {
      const auto id = "run_" + pad(c * 10 + b);
      auto batch = create_batch(id);
      batch.events.push_back(make_event("evt_" + id + "_2", id, 2, "run.started"));
      bs.push_back(std::move(batch));
    }
    auto rs = st.commit(bs);
    for (const auto& r : rs)
      CAF_REQUIRE_EQUAL(r.err.message, "");
    std::vector<write_batch> bad(1);
    bad[0].update = sreh::test::make_run("run_missing");
    bad[0].events.push_back(make_event("evt_bad", "run_missing", 1));
    CAF_REQUIRE(static_cast<bool>(st.commit(bad).front().err));
  }
}

/// The hash of the newest entry of the SQLite file `path`.
std::string sqlite_last_hash(const std::string& path) {
  sqlite3* db = nullptr;
  std::string out;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db, "SELECT hash FROM events ORDER BY seq DESC LIMIT 1", -1, &stmt,
                           nullptr) == SQLITE_OK &&
        sqlite3_step(stmt) == SQLITE_ROW)
      out = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
    sqlite3_finalize(stmt);
  }
  sqlite3_close(db);
  return out;
}

store_stats stats_of(store& st) {
  auto s = st.stats();
  if (!s)
    CAF_FAIL("stats: " << s.error().message);
  return *s;
}

/// The error message of committing `bs` ("" on success). (CAF's checks hold references to their
/// operands: a member of a temporary result would dangle.)
std::string commit_error(store& st, std::vector<write_batch>& bs) {
  auto rs = st.commit(bs);
  return rs.empty() ? std::string{"no result"} : rs.front().err.message;
}

std::int64_t offset_of(store& st, std::string_view name) {
  auto off = st.relay_offset(name);
  if (!off)
    CAF_FAIL("relay_offset: " << off.error().message);
  return *off;
}

} // namespace

CAF_TEST(the audit chain is the one the SQLite store writes) {
  in_memory_store mem;
  CAF_CHECK_EQUAL(mem.last_hash(), std::string{audit_genesis_hash});
  write_history(mem);
  test::temp_dir dir;
  CAF_REQUIRE(!dir.path().empty());
  const auto path = dir.path() + "/sreh.db";
  {
    auto lite = open_sqlite_store(sqlite_options{path});
    CAF_REQUIRE(lite.has_value());
    write_history(**lite);
  }
  CAF_CHECK_EQUAL(mem.last_hash(), sqlite_last_hash(path));
  // And it is the documented formula over what the store returns.
  event_filter all;
  all.limit = 1'000;
  auto evs = mem.read_events(all);
  CAF_REQUIRE(evs.has_value());
  CAF_REQUIRE_EQUAL(evs->size(), 18u);
  std::string prev{audit_genesis_hash};
  for (const auto& e : *evs)
    prev = audit_hash(prev, e.seq, e);
  CAF_CHECK_EQUAL(mem.last_hash(), prev);
}

CAF_TEST(stores made on the same contents see the same rows) {
  auto first = std::make_unique<in_memory_store>();
  auto contents = first->shared_contents();
  std::vector<write_batch> bs(1, create_batch("run_a"));
  CAF_REQUIRE_EQUAL(commit_error(*first, bs), "");
  CAF_REQUIRE_EQUAL(first->set_relay_offset("jetstream", 1).message, "");
  first.reset();
  in_memory_store again{contents};
  CAF_CHECK(again.get_run("run_a")->has_value());
  CAF_CHECK_EQUAL(offset_of(again, "jetstream"), 1);
  in_memory_store other;
  CAF_CHECK(!other.get_run("run_a")->has_value());
  CAF_CHECK(other.cluster() == nullptr);
}

CAF_TEST(an injected failure fails every call until it is cleared) {
  in_memory_store st;
  std::vector<write_batch> first(1, create_batch("run_a"));
  first[0].approvals.push_back(make_approval("apr_a", "run_a"));
  CAF_REQUIRE_EQUAL(commit_error(st, first), "");
  st.fail_with({errc::unavailable, "database away"});
  std::vector<write_batch> bs(1, create_batch("run_b"));
  auto rs = st.commit(bs);
  CAF_CHECK_EQUAL(static_cast<int>(rs.front().err.code), static_cast<int>(errc::unavailable));
  CAF_CHECK_EQUAL(rs.front().err.message, "database away");
  CAF_CHECK_EQUAL(bs.front().events.size(), 1u); // left as given
  CAF_CHECK_EQUAL(st.ping().message, "database away");
  CAF_CHECK(!st.get_run("run_a").has_value());
  CAF_CHECK(!st.list_runs({}).has_value());
  CAF_CHECK(!st.get_steps("run_a").has_value());
  CAF_CHECK(!st.read_events({}).has_value());
  CAF_CHECK(!st.unfinished_runs("n1").has_value());
  CAF_CHECK(!st.find_by_idempotency_key("k").has_value());
  CAF_CHECK(!st.rate_counted_tool_steps(0).has_value());
  CAF_CHECK(!st.stats().has_value());
  CAF_CHECK(!st.get_approval("apr_a").has_value());
  CAF_CHECK(!st.list_approvals({}).has_value());
  CAF_CHECK(!st.pending_approvals().has_value());
  CAF_CHECK(!st.approval_for_step("run_a", 1).has_value());
  CAF_CHECK(!st.relay_offset("jetstream").has_value());
  CAF_CHECK(static_cast<bool>(st.set_relay_offset("jetstream", 3)));
  st.fail_with({});
  CAF_CHECK(!st.ping());
  CAF_CHECK_EQUAL(stats_of(st).runs, 1);
  CAF_CHECK_EQUAL(stats_of(st).last_event_seq, 1);
  CAF_CHECK_EQUAL(offset_of(st, "jetstream"), 0);
  auto after = st.commit(bs); // CAF compares through references: keep the results
  CAF_REQUIRE_EQUAL(after.front().events.size(), 1u);
  CAF_CHECK_EQUAL(after.front().events[0].seq, 2);
}

CAF_TEST(a failed commit restores every row it had changed) {
  in_memory_store st;
  auto a = create_batch("run_a", "key-a");
  step s;
  s.run_id = "run_a";
  s.n = 1;
  s.result = "{}";
  a.steps.push_back(s);
  a.approvals.push_back(make_approval("apr_a", "run_a"));
  std::vector<write_batch> first(1, std::move(a));
  CAF_REQUIRE_EQUAL(commit_error(st, first), "");
  // One commit changes the run (and its key), the step and the approval, creates a run, then
  // fails on a duplicate event id: everything is as before.
  auto changed = *st.get_run("run_a").value();
  changed.idempotency_key = "key-a2";
  changed.checkpoint = R"({"changed":true})";
  write_batch b;
  b.update = changed;
  s.result = R"({"changed":true})";
  b.steps.push_back(s);
  auto apr = make_approval("apr_a", "run_a");
  apr.state = approval_state::approved;
  b.approvals.push_back(apr);
  b.approvals.push_back(make_approval("apr_new", "run_a", 2));
  b.events.push_back(make_event("evt_a2", "run_a", 2));
  std::vector<write_batch> bs;
  bs.push_back(std::move(b));
  bs.push_back(create_batch("run_b", "key-b"));
  bs.push_back(create_batch("run_a")); // its event id evt_run_a exists
  bs.back().create->id = "run_c";
  auto rs = st.commit(bs);
  CAF_REQUIRE_EQUAL(rs.size(), 3u);
  CAF_CHECK(rs[0].err.message.find("evt_run_a") != std::string::npos);
  auto run_a = st.get_run("run_a").value();
  CAF_REQUIRE(run_a.has_value());
  CAF_CHECK_EQUAL(run_a->idempotency_key, "key-a");
  CAF_CHECK_EQUAL(run_a->checkpoint, "{}");
  CAF_CHECK_EQUAL(st.find_by_idempotency_key("key-a")->value_or(""), "run_a");
  CAF_CHECK(!st.find_by_idempotency_key("key-a2")->has_value());
  CAF_CHECK(!st.find_by_idempotency_key("key-b")->has_value());
  CAF_CHECK(!st.get_run("run_b")->has_value());
  CAF_CHECK(!st.get_run("run_c")->has_value());
  auto steps = st.get_steps("run_a");
  CAF_REQUIRE(steps.has_value() && steps->size() == 1u);
  CAF_CHECK_EQUAL(steps->front().result, "{}");
  CAF_CHECK_EQUAL(static_cast<int>(st.get_approval("apr_a")->value().state),
                  static_cast<int>(approval_state::pending));
  CAF_CHECK(!st.get_approval("apr_new")->has_value());
  CAF_CHECK_EQUAL(stats_of(st).last_event_seq, 1);
  // The event ids of the failed commit are free again.
  write_batch retry;
  retry.events.push_back(make_event("evt_a2", "run_a", 2));
  std::vector<write_batch> again;
  again.push_back(std::move(retry));
  CAF_CHECK_EQUAL(commit_error(st, again), "");
}
