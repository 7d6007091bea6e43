// Cluster membership, run leases, fencing and the relay lock of the PostgreSQL store
// (cluster_store.hpp, postgres_store.hpp), on the server of SREH_PG_URL.
#define CAF_SUITE cluster_store_pg
#include <pqxx/pqxx>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <set>
#include <thread>

#include "persistence/audit/audit.hpp"
#include "tests/support/caf_test.hpp"
#include "tests/support/store_conformance_fixture.hpp"

using namespace sreh;
using namespace sreh::persistence;
using namespace std::chrono_literals;

namespace {

postgres_options pg_options(const std::string& dir) {
  const char* url = std::getenv("SREH_PG_URL");
  if (url == nullptr || *url == '\0')
    CAF_FAIL("cluster_store_pg needs SREH_PG_URL (scripts/test.sh starts PostgreSQL and sets it)");
  postgres_options o;
  o.url = url;
  o.schema = test::test_pg_schema(dir);
  return o;
}

node_heartbeat beat_of(const std::string& id) {
  node_heartbeat hb;
  hb.node_id = id;
  hb.http = "127.0.0.1:1";
  hb.cluster = "127.0.0.1:2";
  hb.roles = "api,worker,relay";
  hb.started_at = 1;
  return hb;
}

struct fixture {
  test::temp_dir dir;
  postgres_options opts = pg_options(dir.path());
  store_ptr st;
  cluster_store* cs = nullptr;

  fixture() {
    auto s = open_postgres_store(opts);
    if (!s)
      CAF_FAIL("cannot open the store: " << s.error().message);
    st = std::move(*s);
    cs = st->cluster();
    if (cs == nullptr)
      CAF_FAIL("the PostgreSQL store has no cluster_store");
  }

  heartbeat_result beat(const std::string& id, std::chrono::milliseconds ttl) {
    auto r = cs->heartbeat(beat_of(id), ttl);
    if (!r)
      CAF_FAIL("heartbeat " << id << ": " << r.error().message);
    return std::move(*r);
  }

  /// A run of `owner` in `state` with its run.created event.
  void make_run(const std::string& id, const std::string& owner, run_state state) {
    auto b = test::create_batch(id);
    b.create->node_id = owner;
    b.create->state = state;
    std::vector<write_batch> bs;
    bs.push_back(std::move(b));
    auto rs = st->commit(bs);
    CAF_REQUIRE_EQUAL(rs.size(), 1u);
    CAF_REQUIRE_EQUAL(rs[0].err.message, "");
  }

  /// Waits (up to 10 s) until `id`'s lease has expired as the database sees it.
  void wait_dead(const std::string& id) {
    const auto until = std::chrono::steady_clock::now() + 10s;
    while (std::chrono::steady_clock::now() < until) {
      auto ms = cs->members();
      CAF_REQUIRE(ms.has_value());
      for (const auto& m : *ms)
        if (m.node.node_id == id && !m.alive)
          return;
      std::this_thread::sleep_for(5ms);
    }
    CAF_FAIL("the lease of " << id << " did not expire");
  }

  /// Commits one batch of `events` events of `run_id` on `on`: its outcome. Safe from any
  /// thread (CAF's checks are not).
  static commit_result commit_batch(store& on, const std::string& run_id, int events,
                                    std::atomic<int>& next_id) {
    write_batch b;
    for (int k = 0; k < events; ++k) {
      const int id = next_id.fetch_add(1);
      b.events.push_back(test::make_event(fmt::format("evt_{}_{}", run_id, id), run_id, id));
    }
    std::vector<write_batch> bs;
    bs.push_back(std::move(b));
    auto rs = on.commit(bs);
    if (rs.size() == 1)
      return std::move(rs[0]);
    commit_result none;
    none.err = sreh::error{errc::internal, fmt::format("{} results for one batch", rs.size())};
    return none;
  }

  /// `commit_batch` checked (test thread only); the seq of its first event.
  static std::int64_t commit_events(store& on, const std::string& run_id, int events,
                                    std::atomic<int>& next_id) {
    auto r = commit_batch(on, run_id, events, next_id);
    CAF_REQUIRE_EQUAL(r.err.message, "");
    return r.events.front().seq;
  }

  /// Reads the whole log of the schema on a connection of its own and checks that seqs run
  /// 1..n without a gap and that every entry's prev_hash and hash follow the chain.
  std::int64_t check_chain() {
    pqxx::connection c{opts.url};
    pqxx::nontransaction tx{c};
    tx.exec0("SET search_path TO " + tx.quote_name(opts.schema));
    const auto rows = tx.exec(
      "SELECT seq, id, run_id, run_seq, kind, at, data, prev_hash, hash FROM events ORDER BY seq");
    std::string prev{audit_genesis_hash};
    std::int64_t expect = 1;
    std::size_t gaps = 0, broken = 0;
    for (const auto& row : rows) {
      event e;
      e.seq = row[0].as<std::int64_t>();
      e.id = row[1].as<std::string>();
      e.run_id = row[2].as<std::string>();
      e.run_seq = row[3].as<std::int64_t>();
      e.kind = row[4].as<std::string>();
      e.at = row[5].as<std::int64_t>();
      e.data = row[6].as<std::string>();
      if (e.seq != expect)
        ++gaps;
      if (row[7].as<std::string>() != prev ||
          row[8].as<std::string>() != audit_hash(prev, e.seq, e))
        ++broken;
      prev = row[8].as<std::string>();
      expect = e.seq + 1;
    }
    CAF_CHECK_EQUAL(gaps, 0u);
    CAF_CHECK_EQUAL(broken, 0u);
    return static_cast<std::int64_t>(rows.size());
  }

  commit_result update(run r) {
    write_batch b;
    r.updated_at += 1;
    b.update = std::move(r);
    std::vector<write_batch> bs;
    bs.push_back(std::move(b));
    return std::move(st->commit(bs).front());
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(cluster_store_pg_tests, fixture)

CAF_TEST(a heartbeat registers a live member with its load) {
  auto hb = beat_of("node-a");
  hb.active_runs = 7;
  hb.parked_runs = 2;
  auto r = cs->heartbeat(hb, 5s);
  CAF_REQUIRE(r.has_value());
  CAF_CHECK(!r->lease_was_expired);
  CAF_REQUIRE_EQUAL(r->nodes.size(), 1u);
  const auto m = r->nodes.front();
  CAF_CHECK_EQUAL(m.node.node_id, "node-a");
  CAF_CHECK_EQUAL(m.node.roles, "api,worker,relay");
  CAF_CHECK_EQUAL(m.node.active_runs, 7);
  CAF_CHECK_EQUAL(m.node.parked_runs, 2);
  CAF_CHECK(m.alive);
  CAF_CHECK_LESS(m.heartbeat_age_ms, 1000);
}

CAF_TEST(runs of a live member are never claimed; the unfinished runs of a dead member are) {
  beat("node-a", 300ms);
  beat("node-b", 60s);
  make_run("run_a1", "node-a", run_state::running);
  make_run("run_a2", "node-a", run_state::waiting);
  make_run("run_a3", "node-a", run_state::succeeded);
  make_run("run_b1", "node-b", run_state::running);
  auto none = cs->claim_orphans("node-b", 10);
  CAF_REQUIRE(none.has_value());
  CAF_CHECK_EQUAL(none->size(), 0u);
  wait_dead("node-a");
  auto claimed = cs->claim_orphans("node-b", 10);
  CAF_REQUIRE(claimed.has_value());
  CAF_REQUIRE_EQUAL(claimed->size(), 2u);
  std::set<std::string> ids;
  for (const auto& r : *claimed) {
    ids.insert(r.id);
    CAF_CHECK_EQUAL(r.node_id, "node-b");
  }
  CAF_CHECK_EQUAL(ids, (std::set<std::string>{"run_a1", "run_a2"}));
  auto finished = st->get_run("run_a3");
  CAF_REQUIRE(finished.has_value() && finished->has_value());
  const auto owner = (*finished)->node_id;
  CAF_CHECK_EQUAL(owner, "node-a");
  auto again = cs->claim_orphans("node-b", 10);
  CAF_REQUIRE(again.has_value());
  CAF_CHECK_EQUAL(again->size(), 0u);
  // The member that comes back learns that its lease had expired.
  CAF_CHECK(beat("node-a", 60s).lease_was_expired);
}

CAF_TEST(the open works of a dead member are claimed and its stale copy is fenced off) {
  beat("node-a", 300ms);
  beat("node-b", 60s);
  auto make = [this](const std::string& id, works::work_state state, std::int64_t at) {
    works::work w;
    w.id = id;
    w.template_name = "t";
    w.node_id = "node-a";
    w.state = state;
    w.created_at = at;
    std::vector<write_batch> bs(1);
    bs[0].create_work = w;
    auto rs = st->commit(bs);
    CAF_REQUIRE_EQUAL(rs[0].err.message, "");
    return w;
  };
  auto open2 = make("wrk_2", works::work_state::mitigating, 2);
  make("wrk_1", works::work_state::open, 1);
  make("wrk_3", works::work_state::resolved, 3);
  auto none = cs->claim_orphan_works("node-b", 10);
  CAF_REQUIRE(none.has_value());
  CAF_CHECK_EQUAL(none->size(), 0u); // node-a is alive
  wait_dead("node-a");
  auto claimed = cs->claim_orphan_works("node-b", 10);
  CAF_REQUIRE(claimed.has_value());
  CAF_CHECK_EQUAL(*claimed, (std::vector<std::string>{"wrk_1", "wrk_2"})); // oldest first
  auto moved = **st->get_work("wrk_2");
  CAF_CHECK_EQUAL(moved.node_id, "node-b"); // the document too
  const auto closed = **st->get_work("wrk_3");
  CAF_CHECK_EQUAL(closed.node_id, "node-a");
  const auto open_b = *st->open_works("node-b");
  CAF_CHECK_EQUAL(open_b.size(), 2u);
  // node-a's copy may no longer write it; node-b may.
  open2.state = works::work_state::resolved;
  std::vector<write_batch> stale(1);
  stale[0].update_work = open2;
  auto rs = st->commit(stale);
  CAF_CHECK_EQUAL(rs[0].err.code, errc::conflict);
  CAF_CHECK_EQUAL(rs[0].err.message, std::string{"work wrk_2 is owned by node 'node-b' now"});
  const auto unchanged = **st->get_work("wrk_2");
  CAF_CHECK_EQUAL(std::string{to_string(unchanged.state)}, "mitigating");
  moved.state = works::work_state::monitoring;
  std::vector<write_batch> fresh(1);
  fresh[0].update_work = moved;
  auto fresh_rs = st->commit(fresh);
  CAF_CHECK_EQUAL(fresh_rs[0].err.message, "");
  const auto again = cs->claim_orphan_works("node-b", 10);
  CAF_CHECK(again && again->empty());
}

CAF_TEST(a node whose run was claimed can no longer write it) {
  beat("node-a", 300ms);
  beat("node-b", 60s);
  make_run("run_f1", "node-a", run_state::running);
  make_run("run_f2", "node-a", run_state::running);
  auto old_copy = **st->get_run("run_f1");
  auto other = **st->get_run("run_f2");
  wait_dead("node-a");
  auto claimed = cs->claim_orphans("node-b", 1); // only the oldest
  CAF_REQUIRE(claimed.has_value());
  CAF_REQUIRE_EQUAL(claimed->size(), 1u);
  CAF_REQUIRE_EQUAL(claimed->front().id, "run_f1");
  const auto before = st->stats()->events;
  // node-a's stale copy: its update and event are refused, with the new owner named.
  old_copy.state = run_state::succeeded;
  write_batch stale;
  stale.update = old_copy;
  stale.events.push_back(test::make_event("evt_stale", "run_f1", 2, "run.finished"));
  write_batch fine; // a run node-a still owns commits in the same group
  fine.update = other;
  fine.events.push_back(test::make_event("evt_fine", "run_f2", 2, "step.intent"));
  std::vector<write_batch> bs;
  bs.push_back(std::move(stale));
  bs.push_back(std::move(fine));
  auto rs = st->commit(bs);
  CAF_REQUIRE_EQUAL(rs.size(), 2u);
  // The store fails the whole transaction (the group writer then commits batch by batch).
  CAF_CHECK_EQUAL(rs[0].err.code, errc::conflict);
  CAF_CHECK(rs[0].err.message.find("node-b") != std::string::npos);
  const auto after = st->stats()->events;
  CAF_CHECK_EQUAL(after, before);
  auto now = **st->get_run("run_f1");
  CAF_CHECK_EQUAL(now.state, run_state::running);
  CAF_CHECK_EQUAL(now.node_id, "node-b");
  // The new owner writes it.
  auto r = update(claimed->front());
  CAF_CHECK_EQUAL(r.err.message, "");
}

CAF_TEST(concurrent claimers split the runs of a dead member without overlap) {
  beat("node-a", 300ms);
  beat("node-b", 60s);
  beat("node-c", 60s);
  for (int i = 0; i < 120; ++i)
    make_run("run_s" + test::pad(i), "node-a", run_state::running);
  wait_dead("node-a");
  // Two nodes: two stores (each with its own membership connection), claiming at once.
  auto second = open_postgres_store(opts);
  CAF_REQUIRE(second.has_value());
  auto* cs_c = (*second)->cluster();
  std::vector<std::string> by_b, by_c;
  auto claimer = [&](cluster_store* on, const std::string& me, std::vector<std::string>& out) {
    for (;;) {
      auto rs = on->claim_orphans(me, 7);
      if (!rs || rs->empty())
        return;
      for (const auto& r : *rs)
        out.push_back(r.id);
    }
  };
  std::thread b{[&] { claimer(cs, "node-b", by_b); }};
  std::thread c{[&] { claimer(cs_c, "node-c", by_c); }};
  b.join();
  c.join();
  std::set<std::string> all(by_b.begin(), by_b.end());
  all.insert(by_c.begin(), by_c.end());
  CAF_CHECK_EQUAL(by_b.size() + by_c.size(), 120u); // nobody claimed a run twice
  CAF_CHECK_EQUAL(all.size(), 120u);
  CAF_MESSAGE("node-b claimed " << by_b.size() << ", node-c " << by_c.size());
  auto ms = cs->members();
  CAF_REQUIRE(ms.has_value());
  for (const auto& m : *ms)
    if (m.node.node_id == "node-a")
      CAF_CHECK_EQUAL(m.owned_runs, 0);
}

CAF_TEST(two writers on one schema keep one gap free chain) {
  // A store commits in one round trip after the head it committed last. Once the other store
  // wrote, that head is stale: the commit function refuses it and writes nothing, and the
  // store commits again after the real head. In turns first (each seq checked), then at once.
  make_run("run_w", "node-a", run_state::running);
  auto second = open_postgres_store(opts);
  CAF_REQUIRE(second.has_value());
  store* writers[] = {st.get(), second->get()};
  std::atomic<int> next_id{2};
  std::int64_t next_seq = 2;
  for (int i = 0; i < 60; ++i) {
    auto& w = *writers[(i * 7 / 5) % 2]; // runs of one, two and three commits per writer
    const int events = 1 + i % 3;
    CAF_CHECK_EQUAL(commit_events(w, "run_w", events, next_id), next_seq);
    next_seq += events;
  }
  std::vector<std::thread> ts;
  std::atomic<int> failed{0};
  for (auto* w : writers)
    ts.emplace_back([w, &next_id, &failed] {
      for (int i = 0; i < 150; ++i)
        if (commit_batch(*w, "run_w", 2, next_id).err)
          ++failed;
    });
  for (auto& t : ts)
    t.join();
  CAF_CHECK_EQUAL(failed.load(), 0);
  CAF_CHECK_EQUAL(check_chain(), next_seq - 1 + 600);
  const auto last = st->stats()->last_event_seq;
  CAF_CHECK_EQUAL(last, next_seq - 1 + 600);
}

CAF_TEST(a dropped commit function is made again and no commit fails) {
  // Commits take one round trip through the schema's commit function; only that path notices
  // it is gone and creates it again (the commit itself then runs as a transaction).
  make_run("run_d", "node-a", run_state::running);
  std::atomic<int> next_id{2};
  commit_events(*st, "run_d", 1, next_id); // the head is known from here on
  pqxx::connection c{opts.url};
  pqxx::nontransaction tx{c};
  const auto functions = [&] {
    return tx
      .exec_params1("SELECT count(*) FROM pg_proc WHERE proname LIKE 'sreh_commit_%' AND "
                    "pronamespace = $1::regnamespace",
                    opts.schema)[0]
      .as<int>();
  };
  CAF_REQUIRE_EQUAL(functions(), 1);
  const auto name = tx.exec_params1("SELECT proname FROM pg_proc WHERE proname LIKE "
                                    "'sreh_commit_%' AND pronamespace = $1::regnamespace",
                                    opts.schema)[0]
                      .as<std::string>();
  tx.exec0("DROP FUNCTION " + tx.quote_name(opts.schema) + "." + tx.quote_name(name));
  CAF_REQUIRE_EQUAL(functions(), 0);
  CAF_CHECK_EQUAL(commit_events(*st, "run_d", 2, next_id), 3);
  CAF_CHECK_EQUAL(functions(), 1);
  CAF_CHECK_EQUAL(commit_events(*st, "run_d", 1, next_id), 5);
  CAF_CHECK_EQUAL(check_chain(), 5);
}

CAF_TEST(a schema whose name needs quoting opens and commits) {
  // Upper case and a dot: quoted everywhere, never folded or split.
  auto o = opts;
  o.schema = opts.schema + "_Mixed.Case";
  auto mixed = open_postgres_store(o);
  CAF_REQUIRE_EQUAL(mixed ? std::string{} : mixed.error().message, "");
  std::atomic<int> next_id{2};
  std::vector<write_batch> bs;
  bs.push_back(test::create_batch("run_m"));
  const auto created = (*mixed)->commit(bs); // kept: CAF compares through references
  CAF_REQUIRE_EQUAL(created.front().err.message, "");
  CAF_CHECK_EQUAL(commit_events(**mixed, "run_m", 2, next_id), 2);
  CAF_CHECK_EQUAL(commit_events(**mixed, "run_m", 1, next_id), 4);
  auto again = open_postgres_store(o); // finds its commit function: creates nothing twice
  CAF_REQUIRE_EQUAL(again ? std::string{} : again.error().message, "");
  CAF_CHECK_EQUAL(commit_events(**again, "run_m", 1, next_id), 5);
}

CAF_TEST(a batch retried after a commit of unknown outcome is not applied twice) {
  // The batch commits, but the writer is told otherwise (the connection died during COMMIT):
  // it retries the same batch. Make the store distrust its last commit with a failing one.
  make_run("run_u1", "node-a", run_state::running);
  write_batch b;
  b.update = **st->get_run("run_u1");
  b.update->steps = 1;
  b.events.push_back(test::make_event("evt_u1_2", "run_u1", 2, "step.intent"));
  std::vector<write_batch> first;
  first.push_back(b);
  auto r1 = st->commit(first);
  CAF_REQUIRE_EQUAL(r1[0].err.message, "");
  const auto seq = r1[0].events.at(0).seq;
  write_batch broken; // an update of a run that does not exist fails the whole commit
  broken.update = **st->get_run("run_u1");
  broken.update->id = "run_missing";
  std::vector<write_batch> bad;
  bad.push_back(std::move(broken));
  CAF_REQUIRE(st->commit(bad)[0].err);
  // The retry, grouped with a new batch: the retry gets its stored seq, the new one the next.
  std::vector<write_batch> retry;
  retry.push_back(b);
  write_batch fresh;
  fresh.events.push_back(test::make_event("evt_u1_3", "run_u1", 3, "step.outcome"));
  retry.push_back(std::move(fresh));
  auto r2 = st->commit(retry);
  CAF_REQUIRE_EQUAL(r2.size(), 2u);
  CAF_REQUIRE_EQUAL(r2[0].err.message, "");
  CAF_REQUIRE_EQUAL(r2[1].err.message, "");
  const auto retried = r2[0].events.at(0).seq;
  const auto next = r2[1].events.at(0).seq;
  CAF_CHECK_EQUAL(retried, seq);
  CAF_CHECK_EQUAL(next, seq + 1);
  const auto events = st->stats()->events;
  CAF_CHECK_EQUAL(events, 3); // run.created, the intent once, the outcome
}

CAF_TEST(one relay lock holder at a time and takeover when it goes) {
  auto first = make_postgres_relay_lock(opts, "jetstream");
  auto second = make_postgres_relay_lock(opts, "jetstream");
  auto other_name = make_postgres_relay_lock(opts, "other");
  auto a = first->acquire();
  CAF_REQUIRE(a.has_value());
  CAF_CHECK(*a);
  auto b = second->acquire();
  CAF_REQUIRE(b.has_value());
  CAF_CHECK(!*b);
  auto c = other_name->acquire(); // another relay's lock is independent
  CAF_REQUIRE(c.has_value());
  CAF_CHECK(*c);
  auto held = first->acquire(); // still held, idempotent
  CAF_REQUIRE(held.has_value());
  CAF_CHECK(*held);
  first->release();
  // The standby gets it once the holder's session has let go (a relay retries every second).
  bool taken = false;
  const auto until = std::chrono::steady_clock::now() + 10s;
  while (!taken && std::chrono::steady_clock::now() < until) {
    auto t = second->acquire();
    CAF_REQUIRE(t.has_value());
    taken = *t;
    if (!taken)
      std::this_thread::sleep_for(10ms);
  }
  CAF_CHECK(taken);
  auto lost = first->acquire();
  CAF_REQUIRE(lost.has_value());
  CAF_CHECK(!*lost);
}

CAF_TEST(the lock holder is woken by commits of events) {
  auto lock = make_postgres_relay_lock(opts, "jetstream");
  auto a = lock->acquire();
  CAF_REQUIRE(a.has_value() && *a);
  CAF_CHECK(!lock->wait_for_commit(50ms)); // nothing committed
  std::thread writer{[this] { make_run("run_n1", "node-a", run_state::running); }};
  bool woken = false;
  const auto until = std::chrono::steady_clock::now() + 10s;
  while (!woken && std::chrono::steady_clock::now() < until)
    woken = lock->wait_for_commit(100ms);
  writer.join();
  CAF_CHECK(woken);
}

CAF_TEST_FIXTURE_SCOPE_END()
