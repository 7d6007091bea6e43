// The relay across a restart of the NATS server (a server of the test's own, restarted in place
// on the same port and store directory) while writers keep committing: it reconnects, loses
// nothing and JetStream's MsgId dedupe leaves no duplicate.
#define CAF_SUITE relay_nats_restart
#include "tests/support/caf_test.hpp"
#include "tests/support/relay_fixture.hpp"

using namespace sreh;
using namespace std::chrono_literals;

namespace {

/// The relay fixture on a NATS server of the test's own, restarted in place.
using restart_fixture = sreh::test::own_server_fixture<sreh::test::relay_fixture>;

} // namespace

CAF_TEST_FIXTURE_SCOPE(relay_nats_restart_tests, restart_fixture)

CAF_TEST(a restarted server loses nothing and gets no duplicates) {
  auto o = f->options();
  o.page_size = 200;
  net::relay r{*f->st, *f->st, &f->hub, o};
  CAF_REQUIRE_EQUAL(r.start().message, "");
  std::atomic<bool> writing{true};
  std::thread writers{[&] {
    f->write(4, 400, 2, 500us); // 3,200 events over a few seconds
    writing = false;
  }};
  CAF_REQUIRE(f->wait_offset(r, 400, std::chrono::seconds{30}));
  server.stop(); // mid-stream
  const auto at_stop = r.stats().offset;
  CAF_CHECK(sreh::test::eventually([&] { return !r.stats().connected; }, 10s));
  server.start();
  writers.join();
  const auto last = f->last_seq();
  CAF_CHECK_EQUAL(last, 3'200);
  CAF_REQUIRE(f->wait_offset(r, last, std::chrono::seconds{60}));
  r.stop();
  const auto s = r.stats();
  CAF_MESSAGE("stopped at offset " << at_stop << "; published " << s.published << ", acked "
                                   << s.acked << ", duplicates " << s.duplicates << ", errors "
                                   << s.errors);
  CAF_CHECK(at_stop < last);
  CAF_CHECK_GREATER_OR_EQUAL(s.published, static_cast<std::uint64_t>(last));
  f->check_stream();
}

CAF_TEST(a relay restarted against a restarted server resumes from its offset) {
  f->write(2, 100, 5); // 1,000 events
  {
    net::relay r{*f->st, *f->st, &f->hub, f->options()};
    CAF_REQUIRE_EQUAL(r.start().message, "");
    CAF_REQUIRE(f->wait_offset(r, 1'000, std::chrono::seconds{30}));
    r.stop();
  }
  server.stop();
  f->write(2, 100, 5); // 1,000 more while NATS is down and no relay runs
  // Forget the offset of the last 300: they are published again and deduplicated.
  CAF_REQUIRE_EQUAL(f->st->set_relay_offset("jetstream", 700).message, "");
  server.start();
  net::relay r{*f->st, *f->st, &f->hub, f->options()};
  CAF_REQUIRE_EQUAL(r.start().message, "");
  CAF_REQUIRE(f->wait_offset(r, 2'000, std::chrono::seconds{60}));
  r.stop();
  // The 300 forgotten ones come back as duplicates. A publish whose ack was lost (a timeout
  // while the restarted server recovers its store) is sent again and may add one more each:
  // never more than the messages sent beyond the 1,300 of seq 701..2,000.
  const auto s = r.stats();
  CAF_MESSAGE("published " << s.published << ", acked " << s.acked << ", duplicates "
                           << s.duplicates << ", errors " << s.errors);
  CAF_CHECK_GREATER_OR_EQUAL(s.duplicates, 300u);
  CAF_CHECK_LESS_OR_EQUAL(s.duplicates, 300u + (s.published - 1'300u));
  f->check_stream();
}

CAF_TEST_FIXTURE_SCOPE_END()
