// The store contract (persistence/store/store.hpp), run against the backend
// named by SREH_TEST_STORE (see store_factory.hpp). Every test gets a fresh store.
#define CAF_SUITE store_conformance
#include <atomic>
#include <thread>

#include "persistence/store/group_writer.hpp"
#include "tests/support/caf_test.hpp"
#include "tests/support/store_conformance_fixture.hpp"

using namespace sreh;
using namespace sreh::persistence;
using sreh::test::check_same_event;
using sreh::test::check_same_run;
using sreh::test::check_same_step;
using sreh::test::create_batch;
using sreh::test::make_event;
using sreh::test::make_run;
using sreh::test::pad;

CAF_TEST_FIXTURE_SCOPE(store_conformance_tests, sreh::test::fixture)

// -- runs ----------------------------------------------------------------------------------------

CAF_TEST(create and get round trip every field) {
  run r;
  r.id = "run_01HZROUNDTRIP";
  r.goal = "p99 \"latency\" ✓ high\nsecond line";
  r.state = run_state::waiting;
  r.waiting_for = wait_reason::approval;
  r.submitter = "alice@example.com";
  r.idempotency_key = "idem-1";
  r.node_id = "node-7";
  r.created_at = 1'700'000'000'123'456;
  r.updated_at = 1'700'000'999'654'321;
  r.steps = 17;
  r.tokens = 123'456'789'012;
  r.budget = run_budget{9, 77'777, 1'800'000'000'000'000, 4096, 0.1 + 0.2}; // an inexact double
  r.checkpoint = R"({"summary":"ü","hypotheses":[1,2]})";
  r.conclusion = "the cache was cold";
  r.error = "nothing failed";
  r.labels = R"({"team":"payments"})";
  step s;
  s.run_id = r.id;
  s.n = 3;
  s.kind = step_kind::approval;
  s.state = step_state::in_doubt;
  s.tool = "kubectl.rollout_restart";
  s.args = R"({"deployment":"checkout"})";
  s.idempotency_key = r.id + ":3";
  s.decision = R"({"thought":"restart"})";
  s.result = R"({"ok":true})";
  s.error = "timed out";
  s.result_truncated = true;
  s.started_at = 1'700'000'000'000'001;
  s.finished_at = 1'700'000'000'000'002;
  s.attempts = 2;
  write_batch b;
  b.create = r;
  b.steps.push_back(s);
  auto ev = make_event("evt_roundtrip", r.id, 1, "run.created");
  ev.data = R"({"goal":"p99 \"latency\""})";
  b.events.push_back(ev);
  auto res = commit_one(std::move(b));
  CAF_CHECK_EQUAL(res.existing_run_id, "");
  CAF_REQUIRE_EQUAL(res.events.size(), 1u);
  CAF_CHECK_EQUAL(res.events[0].seq, 1);
  check_same_run(get(r.id), r);
  auto steps = st->get_steps(r.id);
  CAF_REQUIRE(steps.has_value());
  CAF_REQUIRE_EQUAL(steps->size(), 1u);
  check_same_step(steps->front(), s);
  auto evs = all_events();
  CAF_REQUIRE_EQUAL(evs.size(), 1u);
  ev.seq = 1;
  check_same_event(evs.front(), ev);
  auto missing = st->get_run("run_nope");
  CAF_REQUIRE(missing.has_value());
  CAF_CHECK(!missing->has_value());
  CAF_CHECK(st->get_steps("run_nope")->empty());
}

CAF_TEST(update replaces the stored run) {
  commit_one(create_batch("run_a"));
  auto r = get("run_a");
  r.state = run_state::succeeded;
  r.conclusion = "done";
  r.steps = 4;
  r.checkpoint = R"({"k":2})";
  write_batch b;
  b.update = r;
  b.events.push_back(make_event("evt_a2", "run_a", 2, "run.succeeded"));
  commit_one(std::move(b));
  check_same_run(get("run_a"), r);
}

CAF_TEST(idempotency key conflict skips the whole batch) {
  auto first = commit_one(create_batch("run_a", "key-1"));
  CAF_CHECK_EQUAL(first.existing_run_id, "");
  auto b = create_batch("run_b", "key-1");
  step s;
  s.run_id = "run_b";
  s.n = 1;
  b.steps.push_back(s);
  auto second = commit_one(std::move(b));
  CAF_CHECK_EQUAL(second.existing_run_id, "run_a");
  CAF_CHECK(second.events.empty());
  CAF_CHECK(!st->get_run("run_b")->has_value());
  CAF_CHECK(st->get_steps("run_b")->empty());
  CAF_CHECK_EQUAL(stats().events, 1);
  CAF_CHECK_EQUAL(stats().last_event_seq, 1);
  auto found = st->find_by_idempotency_key("key-1");
  CAF_REQUIRE(found.has_value());
  CAF_CHECK_EQUAL(found->value_or(""), "run_a");
  CAF_CHECK(!st->find_by_idempotency_key("key-2")->has_value());
  CAF_CHECK(!st->find_by_idempotency_key("")->has_value());
}

CAF_TEST(two creates with one key in one commit) {
  std::vector<write_batch> bs;
  bs.push_back(create_batch("run_x", "key-9"));
  bs.push_back(create_batch("run_y", "key-9"));
  bs.push_back(create_batch("run_z"));
  bs.push_back(create_batch("run_w")); // an empty key never conflicts
  auto rs = commit_ok(std::move(bs));
  CAF_CHECK_EQUAL(rs[0].existing_run_id, "");
  CAF_CHECK_EQUAL(rs[1].existing_run_id, "run_x");
  CAF_CHECK_EQUAL(rs[2].existing_run_id, "");
  CAF_CHECK_EQUAL(rs[3].existing_run_id, "");
  CAF_REQUIRE_EQUAL(rs[0].events.size(), 1u);
  CAF_REQUIRE_EQUAL(rs[2].events.size(), 1u);
  CAF_REQUIRE_EQUAL(rs[3].events.size(), 1u);
  CAF_CHECK_EQUAL(rs[0].events[0].seq, 1);
  CAF_CHECK_EQUAL(rs[2].events[0].seq, 2); // the skipped batch takes no seq
  CAF_CHECK_EQUAL(rs[3].events[0].seq, 3);
  CAF_CHECK(!st->get_run("run_y")->has_value());
  CAF_CHECK_EQUAL(stats().runs, 3);
  CAF_CHECK_EQUAL(st->find_by_idempotency_key("key-9")->value_or(""), "run_x");
}

// -- steps ---------------------------------------------------------------------------------------

CAF_TEST(steps upsert from intent to outcome) {
  commit_one(create_batch("run_s"));
  step intent;
  intent.run_id = "run_s";
  intent.n = 2;
  intent.kind = step_kind::tool;
  intent.tool = "prom.query";
  intent.args = R"({"q":"up"})";
  intent.idempotency_key = "run_s:2";
  intent.started_at = 10;
  step first = intent;
  first.n = 1;
  first.kind = step_kind::reason;
  write_batch b;
  b.steps = {intent, first}; // out of order on purpose
  commit_one(std::move(b));
  auto steps = st->get_steps("run_s");
  CAF_REQUIRE_EQUAL(steps->size(), 2u);
  CAF_CHECK_EQUAL(steps->at(0).n, 1);
  check_same_step(steps->at(1), intent);
  step outcome = intent;
  outcome.state = step_state::succeeded;
  outcome.result = R"({"value":1})";
  outcome.finished_at = 20;
  write_batch b2;
  b2.steps = {outcome};
  commit_one(std::move(b2));
  steps = st->get_steps("run_s");
  CAF_REQUIRE_EQUAL(steps->size(), 2u);
  check_same_step(steps->at(1), outcome);
  CAF_CHECK_EQUAL(stats().steps, 2);
}

// -- events --------------------------------------------------------------------------------------

CAF_TEST(events get gap free increasing seq across commits and batches) {
  std::int64_t expected_seq = 1;
  int n = 0;
  for (int c = 0; c < 40; ++c) {
    std::vector<write_batch> bs;
    for (int b = 0; b < 1 + c % 5; ++b) {
      write_batch wb;
      const auto id = "run_" + pad(n++);
      wb.create = make_run(id);
      for (int e = 0; e < b % 3; ++e) // some batches carry no event
        wb.events.push_back(make_event("evt_" + id + "_" + std::to_string(e), id, e + 1));
      bs.push_back(std::move(wb));
    }
    for (auto& r : commit_ok(std::move(bs)))
      for (auto& e : r.events)
        CAF_CHECK_EQUAL(e.seq, expected_seq++);
  }
  auto evs = all_events();
  CAF_REQUIRE_EQUAL(static_cast<std::int64_t>(evs.size()), expected_seq - 1);
  for (std::size_t i = 0; i < evs.size(); ++i)
    CAF_CHECK_EQUAL(evs[i].seq, static_cast<std::int64_t>(i + 1));
  CAF_CHECK_EQUAL(stats().last_event_seq, expected_seq - 1);
  CAF_CHECK_EQUAL(stats().events, expected_seq - 1);
}

CAF_TEST(read events filters and pages) {
  for (int i = 0; i < 30; ++i) {
    write_batch b;
    const auto run_id = i % 3 == 0 ? std::string{"run_a"} : std::string{"run_b"};
    if (i < 2)
      b.create = make_run(run_id);
    b.events.push_back(make_event("evt_" + pad(i), run_id, i));
    commit_one(std::move(b));
  }
  event_filter f;
  f.after_seq = 25;
  auto tail = st->read_events(f);
  CAF_REQUIRE(tail.has_value());
  CAF_REQUIRE_EQUAL(tail->size(), 5u);
  CAF_CHECK_EQUAL(tail->front().seq, 26);
  CAF_CHECK_EQUAL(tail->front().id, "evt_" + pad(25));
  f = {};
  f.run_id = "run_a";
  f.limit = 4;
  auto page1 = st->read_events(f);
  CAF_REQUIRE_EQUAL(page1->size(), 4u);
  CAF_CHECK_EQUAL(page1->back().seq, 10);
  f.after_seq = page1->back().seq;
  auto page2 = st->read_events(f);
  CAF_REQUIRE_EQUAL(page2->size(), 4u);
  CAF_CHECK_EQUAL(page2->front().seq, 13);
  for (const auto& e : *page2)
    CAF_CHECK_EQUAL(e.run_id, "run_a");
  CAF_CHECK_EQUAL(all_events("run_a").size(), 10u);
  CAF_CHECK_EQUAL(all_events("run_b").size(), 20u);
  CAF_CHECK(all_events("run_none").empty());
  f = {};
  f.limit = 0; // clamped to 1
  CAF_CHECK_EQUAL(st->read_events(f)->size(), 1u);
  f.limit = -5;
  CAF_CHECK_EQUAL(st->read_events(f)->size(), 1u);
  f.after_seq = 30;
  f.limit = 100;
  CAF_CHECK(st->read_events(f)->empty());
}

// -- listing -------------------------------------------------------------------------------------

CAF_TEST(list runs pages newest first with state filter and cursor) {
  std::vector<write_batch> bs;
  for (int i = 0; i < 120; ++i) {
    write_batch b;
    b.create = make_run("run_" + pad(i));
    b.create->state = i % 4 == 0 ? run_state::succeeded : run_state::running;
    bs.push_back(std::move(b));
  }
  commit_ok(std::move(bs));
  run_filter f;
  f.limit = 50;
  std::vector<std::string> seen;
  std::vector<std::size_t> sizes;
  for (;;) {
    auto page = st->list_runs(f);
    CAF_REQUIRE(page.has_value());
    sizes.push_back(page->runs.size());
    for (auto& r : page->runs)
      seen.push_back(r.id);
    if (page->next_cursor.empty())
      break;
    CAF_CHECK_EQUAL(page->next_cursor, page->runs.back().id);
    f.before_id = page->next_cursor;
  }
  CAF_CHECK_EQUAL(sizes, (std::vector<std::size_t>{50, 50, 20}));
  CAF_REQUIRE_EQUAL(seen.size(), 120u);
  for (std::size_t i = 0; i < seen.size(); ++i)
    CAF_CHECK_EQUAL(seen[i], "run_" + pad(119 - static_cast<int>(i)));
  run_filter done;
  done.state = run_state::succeeded;
  done.limit = 30; // exactly the number of succeeded runs: a full page and nothing more
  auto page = st->list_runs(done);
  CAF_REQUIRE_EQUAL(page->runs.size(), 30u);
  CAF_CHECK_EQUAL(page->next_cursor, "");
  CAF_CHECK_EQUAL(page->runs.front().id, "run_" + pad(116));
  for (auto& r : page->runs)
    CAF_CHECK_EQUAL(static_cast<int>(r.state), static_cast<int>(run_state::succeeded));
  done.limit = 10;
  done.before_id = "run_" + pad(100);
  page = st->list_runs(done);
  CAF_REQUIRE_EQUAL(page->runs.size(), 10u);
  CAF_CHECK_EQUAL(page->runs.front().id, "run_" + pad(96));
  CAF_CHECK_EQUAL(page->next_cursor, "run_" + pad(60));
  run_filter clamp;
  clamp.limit = 0;
  CAF_CHECK_EQUAL(st->list_runs(clamp)->runs.size(), 1u);
  clamp.limit = 100'000;
  CAF_CHECK_EQUAL(st->list_runs(clamp)->runs.size(), 120u);
  CAF_CHECK(st->list_runs(run_filter{run_state::cancelled, {}, 50})->runs.empty());
}

CAF_TEST(list runs clamps the limit to 500) {
  std::vector<write_batch> bs;
  for (int i = 0; i < 501; ++i)
    bs.push_back(create_batch("run_" + pad(i)));
  commit_ok(std::move(bs));
  run_filter f;
  f.limit = 1'000;
  auto page = st->list_runs(f);
  CAF_REQUIRE(page.has_value());
  CAF_CHECK_EQUAL(page->runs.size(), 500u);
  CAF_CHECK_EQUAL(page->next_cursor, "run_" + pad(1));
}

CAF_TEST(unfinished runs of a node oldest first) {
  const run_state states[] = {run_state::pending,   run_state::running, run_state::waiting,
                              run_state::succeeded, run_state::failed,  run_state::cancelled};
  std::vector<write_batch> bs;
  for (int i = 0; i < 12; ++i) {
    write_batch b;
    b.create = make_run("run_" + pad(i));
    b.create->state = states[i % 6];
    b.create->node_id = i < 6 ? "n1" : "n2";
    b.create->created_at = 1'000 - i; // later ids are older
    bs.push_back(std::move(b));
  }
  commit_ok(std::move(bs));
  auto n1 = st->unfinished_runs("n1");
  CAF_REQUIRE(n1.has_value());
  CAF_REQUIRE_EQUAL(n1->size(), 3u);
  CAF_CHECK_EQUAL(n1->at(0).id, "run_" + pad(2));
  CAF_CHECK_EQUAL(n1->at(1).id, "run_" + pad(1));
  CAF_CHECK_EQUAL(n1->at(2).id, "run_" + pad(0));
  CAF_CHECK_EQUAL(st->unfinished_runs("n2")->size(), 3u);
  CAF_CHECK(st->unfinished_runs("n3")->empty());
}

// -- failure and durability ----------------------------------------------------------------------

CAF_TEST(a failed transaction applies nothing and seq does not advance) {
  commit_one(create_batch("run_a"));
  std::vector<write_batch> bs;
  bs.push_back(create_batch("run_b", "key-b"));
  write_batch bad;
  bad.update = make_run("run_missing");
  bad.events.push_back(make_event("evt_bad", "run_missing", 1));
  bs.push_back(std::move(bad));
  bs.push_back(create_batch("run_c"));
  auto rs = st->commit(bs);
  CAF_REQUIRE_EQUAL(rs.size(), 3u);
  for (auto& r : rs) {
    CAF_CHECK_EQUAL(static_cast<int>(r.err.code), static_cast<int>(errc::internal));
    CAF_CHECK(r.err.message.find("run_missing") != std::string::npos);
    CAF_CHECK(r.events.empty());
  }
  CAF_CHECK_EQUAL(bs[0].events.size(), 1u); // the batches are left as given
  CAF_CHECK(!st->get_run("run_b")->has_value());
  CAF_CHECK(!st->get_run("run_c")->has_value());
  CAF_CHECK(!st->find_by_idempotency_key("key-b")->has_value());
  CAF_CHECK_EQUAL(stats().runs, 1);
  CAF_CHECK_EQUAL(stats().last_event_seq, 1);
  auto next = commit_one(create_batch("run_d"));
  CAF_REQUIRE_EQUAL(next.events.size(), 1u);
  CAF_CHECK_EQUAL(next.events[0].seq, 2);
  // A duplicate run id is a failure too, and leaves the store usable.
  auto dup = std::vector<write_batch>{};
  dup.push_back(create_batch("run_a"));
  CAF_CHECK(static_cast<bool>(st->commit(dup).front().err));
  CAF_CHECK(!st->ping());
}

CAF_TEST(reopen sees everything) {
  std::vector<write_batch> bs;
  for (int i = 0; i < 20; ++i)
    bs.push_back(create_batch("run_" + pad(i), "k" + std::to_string(i)));
  commit_ok(std::move(bs));
  write_batch b;
  step s;
  s.run_id = "run_" + pad(3);
  s.n = 1;
  s.result = R"({"x":1})";
  b.steps.push_back(s);
  commit_one(std::move(b));
  auto before = get("run_" + pad(7));
  reopen();
  check_same_run(get("run_" + pad(7)), before);
  CAF_CHECK_EQUAL(stats().runs, 20);
  CAF_CHECK_EQUAL(stats().steps, 1);
  CAF_CHECK_EQUAL(stats().last_event_seq, 20);
  auto steps3 = st->get_steps("run_" + pad(3));
  CAF_REQUIRE(steps3 && !steps3->empty());
  CAF_CHECK_EQUAL(steps3->front().result, R"({"x":1})");
  CAF_CHECK_EQUAL(st->find_by_idempotency_key("k5")->value_or(""), "run_" + pad(5));
  auto more = commit_one(create_batch("run_more"));
  CAF_CHECK_EQUAL(more.events.at(0).seq, 21);
  CAF_CHECK_EQUAL(all_events().size(), 21u);
}

// -- group commit --------------------------------------------------------------------------------

CAF_TEST(group writer acknowledges every submit and batches) {
  constexpr int threads = 64;
  constexpr int per_thread = 200;
  constexpr int total = threads * per_thread;
  group_writer w{*st};
  std::vector<event> heard; // written on the writer thread only, read after stop
  w.set_events_listener(
    [&heard](const std::vector<event>& evs) { heard.insert(heard.end(), evs.begin(), evs.end()); });
  w.start();
  std::atomic<int> acked{0};
  std::atomic<int> failed{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t)
    ts.emplace_back([&, t] {
      for (int i = 0; i < per_thread; ++i) {
        const auto id = "run_" + pad(t) + "_" + pad(i);
        w.submit(create_batch(id), [&acked, &failed](commit_result r) {
          if (r.err || r.events.size() != 1 || r.events[0].seq <= 0)
            ++failed;
          ++acked;
        });
      }
    });
  for (auto& t : ts)
    t.join();
  w.stop();
  CAF_CHECK_EQUAL(acked.load(), total);
  CAF_CHECK_EQUAL(failed.load(), 0);
  auto s = w.stats();
  CAF_CHECK_EQUAL(s.batches, static_cast<std::uint64_t>(total));
  CAF_CHECK_LESS(s.commits, s.batches);
  CAF_CHECK_GREATER(s.commits, 0u);
  CAF_CHECK_EQUAL(s.rows, static_cast<std::uint64_t>(2 * total));
  CAF_CHECK_GREATER(s.bytes, 0u);
  CAF_CHECK_EQUAL(s.failures, 0u);
  CAF_REQUIRE_EQUAL(heard.size(), static_cast<std::size_t>(total));
  for (std::size_t i = 0; i < heard.size(); ++i)
    CAF_CHECK_EQUAL(heard[i].seq, static_cast<std::int64_t>(i + 1));
  CAF_CHECK_EQUAL(stats().runs, total);
  CAF_CHECK_EQUAL(stats().last_event_seq, total);
}

CAF_TEST(group writer stop drains and refuses later submits) {
  group_writer w{*st, group_writer_options{16}};
  w.start();
  std::vector<int> order; // callbacks run on the writer thread, in submission order
  for (int i = 0; i < 1'000; ++i)
    w.submit(create_batch("run_" + pad(i)),
             [&order, i](commit_result r) { order.push_back(r.err ? -1 : i); });
  w.stop();
  CAF_REQUIRE_EQUAL(order.size(), 1'000u);
  for (int i = 0; i < 1'000; ++i)
    CAF_CHECK_EQUAL(order[static_cast<std::size_t>(i)], i);
  CAF_CHECK_GREATER_OR_EQUAL(w.stats().commits, 1'000u / 16);
  CAF_CHECK_EQUAL(stats().runs, 1'000);
  sreh::error late;
  bool called = false;
  w.submit(create_batch("run_late"), [&](commit_result r) {
    called = true;
    late = r.err;
  });
  CAF_CHECK(called);
  CAF_CHECK_EQUAL(static_cast<int>(late.code), static_cast<int>(errc::unavailable));
  CAF_CHECK_EQUAL(late.message, "writer stopped");
  CAF_CHECK(!st->get_run("run_late")->has_value());
}

CAF_TEST(group writer isolates a faulty batch) {
  commit_one(create_batch("run_a"));
  group_writer w{*st};
  std::vector<sreh::error> errs;
  // Submitted before start so that all three land in one transaction.
  w.submit(create_batch("run_b"), [&](commit_result r) { errs.push_back(r.err); });
  write_batch bad;
  bad.update = make_run("run_missing");
  w.submit(std::move(bad), [&](commit_result r) { errs.push_back(r.err); });
  w.submit(create_batch("run_c"), [&](commit_result r) { errs.push_back(r.err); });
  w.start();
  w.stop();
  CAF_REQUIRE_EQUAL(errs.size(), 3u);
  CAF_CHECK(!errs[0]);
  CAF_CHECK_EQUAL(static_cast<int>(errs[1].code), static_cast<int>(errc::internal));
  CAF_CHECK(!errs[2]);
  CAF_CHECK(st->get_run("run_b")->has_value());
  CAF_CHECK(st->get_run("run_c")->has_value());
  CAF_CHECK_EQUAL(stats().last_event_seq, 3);
  CAF_CHECK_GREATER_OR_EQUAL(w.stats().failures, 1u);
}

CAF_TEST_FIXTURE_SCOPE_END()
