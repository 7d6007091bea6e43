// The JetStream relay against a real NATS server (SREH_NATS_URL) and the store of
// SREH_TEST_STORE: exactly once, in seq order, across a takeover, and never past a missing seq.
#define CAF_SUITE relay_jetstream
#include <algorithm>

#include "tests/support/caf_test.hpp"
#include "tests/support/relay_fixture.hpp"

using namespace sreh;
using namespace std::chrono_literals;

CAF_TEST_FIXTURE_SCOPE(relay_jetstream_tests, sreh::test::relay_fixture)

CAF_TEST(subjects keep the dots of the kind and name the run or the node) {
  event e;
  e.kind = "step.intent";
  e.run_id = "run_01ABC";
  CAF_CHECK_EQUAL(net::event_subject("sreh.events", e), "sreh.events.step.intent.run_01ABC");
  e.run_id.clear();
  e.kind = "node.config";
  CAF_CHECK_EQUAL(net::event_subject("sreh.events", e), "sreh.events.node.config.node");
  e.kind = "a b.*.>..";
  e.run_id = "r>1";
  CAF_CHECK_EQUAL(net::event_subject("p", e), "p.a_b._._._._.r_1");
}

CAF_TEST(events of concurrent writers reach the stream exactly once in seq order) {
  net::relay r{*st, *st, &hub, options()};
  CAF_REQUIRE_EQUAL(r.start().message, "");
  const auto w = write(4, 250, 4); // 4,000 events in group commits
  CAF_REQUIRE_EQUAL(w.failures, 0u);
  const auto last = last_seq();
  CAF_CHECK_EQUAL(last, static_cast<std::int64_t>(w.events));
  CAF_REQUIRE(wait_offset(r, last));
  r.stop();
  const auto s = r.stats();
  CAF_CHECK_EQUAL(s.offset, last);
  CAF_CHECK_EQUAL(s.lag, 0);
  CAF_CHECK_EQUAL(s.errors, 0u);
  CAF_CHECK_EQUAL(s.published, static_cast<std::uint64_t>(last));
  CAF_CHECK_EQUAL(s.acked, static_cast<std::uint64_t>(last));
  CAF_CHECK_EQUAL(stored_offset(), last);
  check_stream();
}

CAF_TEST(a new relay takes over from the stored offset without duplicates) {
  std::int64_t first_offset = 0;
  std::thread writers{[this] { write(3, 300, 3, 200us); }};
  {
    auto o = options();
    o.page_size = 100; // many small pages: the stop lands mid-stream
    net::relay r1{*st, *st, &hub, o};
    CAF_REQUIRE_EQUAL(r1.start().message, "");
    CAF_REQUIRE(wait_offset(r1, 500));
    r1.stop();
    first_offset = r1.stats().offset;
  }
  CAF_CHECK_EQUAL(stored_offset(), first_offset);
  net::relay r2{*st, *st, &hub, options()};
  CAF_REQUIRE_EQUAL(r2.start().message, "");
  writers.join();
  const auto last = last_seq();
  CAF_CHECK_EQUAL(last, 2'700);
  CAF_REQUIRE(wait_offset(r2, last));
  r2.stop();
  CAF_MESSAGE("first relay stopped at " << first_offset << " of " << last);
  // The second relay started from the stored offset, not from the beginning.
  CAF_CHECK_EQUAL(r2.stats().published, static_cast<std::uint64_t>(last - first_offset));
  check_stream();
}

CAF_TEST(the relay waits for a missing seq instead of skipping it) {
  write(1, 10, 1); // seqs 1..10
  sreh::test::gap_store gappy{*st};
  gappy.hide(6); // 6 "commits late": 7..10 are visible before it
  auto o = options();
  o.gap_poll = 10ms;
  net::relay r{gappy, gappy, nullptr, o};
  CAF_REQUIRE_EQUAL(r.start().message, "");
  CAF_REQUIRE(wait_offset(r, 5, std::chrono::seconds{10}));
  std::this_thread::sleep_for(300ms);
  CAF_CHECK_EQUAL(r.stats().offset, 5);
  CAF_CHECK_EQUAL(r.stats().published, 5u);
  CAF_CHECK_GREATER(r.stats().gap_waits, 0u);
  CAF_CHECK_EQUAL(stored_offset(), 5);
  gappy.release();
  CAF_REQUIRE(wait_offset(r, 10, std::chrono::seconds{10}));
  r.stop();
  check_stream();
}

CAF_TEST(a relay without a reachable server starts then retries and catches up) {
  // Nothing listens on this port until the end of the test: start() must not fail and the
  // relay must neither store an offset nor log one line per attempt.
  sreh::test::temp_dir nats_dir;
  sreh::test::nats_process server{nats_dir.path() + "/store"};
  url = server.url();
  write(2, 50, 2);
  net::relay r{*st, *st, &hub, options()};
  CAF_REQUIRE_EQUAL(r.start().message, "");
  CAF_CHECK(sreh::test::eventually([&] { return r.stats().errors > 1; }, 10s));
  CAF_CHECK_EQUAL(r.stats().offset, 0);
  CAF_CHECK(!r.stats().connected);
  server.start();
  CAF_REQUIRE(wait_offset(r, 200, std::chrono::seconds{30}));
  r.stop();
  check_stream();
  if (auto c = client(); c)
    (void)c->delete_stream();
  server.stop();
  url = sreh::test::nats_url(); // the fixture's clean-up
}

// Run with: sreh_integration_tests -s relay_jetstream -t 'throughput.*' (disabled by default).
CAF_TEST_DISABLED(throughput of 100000 events) {
  constexpr int events = 100'000;
  write(4, events / 4 / 50, 50);
  CAF_REQUIRE_EQUAL(last_seq(), events);
  std::vector<double> rates;
  for (int i = 0; i < 3; ++i) {
    auto o = options(fmt::format("bench{}", i));
    o.stream = stream + fmt::format("-{}", i);
    o.subject_prefix = prefix + fmt::format(".b{}", i);
    net::relay r{*st, *st, &hub, o};
    const auto t0 = std::chrono::steady_clock::now();
    CAF_REQUIRE_EQUAL(r.start().message, "");
    CAF_REQUIRE(wait_offset(r, events, std::chrono::seconds{300}));
    const std::chrono::duration<double> dt = std::chrono::steady_clock::now() - t0;
    r.stop();
    rates.push_back(events / dt.count());
    CAF_MESSAGE(fmt::format("run {}: {} events in {:.3f} s = {:.0f} events/s", i, events,
                            dt.count(), rates.back()));
    net::jetstream_options jo;
    jo.url = url;
    jo.stream = o.stream;
    jo.subject_prefix = o.subject_prefix;
    if (auto c = net::jetstream_client::connect(jo);
        c && sreh::test::eventually([&] { return (*c)->connected(); }, 10s))
      (void)(*c)->delete_stream();
  }
  std::sort(rates.begin(), rates.end());
  CAF_MESSAGE(fmt::format("relay throughput, median of 3: {:.0f} events/s", rates[1]));
}

CAF_TEST_FIXTURE_SCOPE_END()
