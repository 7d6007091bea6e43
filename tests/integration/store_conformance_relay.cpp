// Relay offsets (store.hpp: relay_offset / set_relay_offset) on the backend named by
// SREH_TEST_STORE. Every test gets a fresh store.
#define CAF_SUITE store_conformance_relay
#include <atomic>
#include <thread>

#include "tests/support/caf_test.hpp"
#include "tests/support/store_conformance_fixture.hpp"

using namespace sreh;
using namespace sreh::persistence;

namespace {

struct relay_fixture : sreh::test::fixture {
  std::int64_t offset(const std::string& name) {
    auto off = st->relay_offset(name);
    if (!off)
      CAF_FAIL("relay_offset(" << name << "): " << off.error().message);
    return off.value();
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(store_conformance_relay_tests, relay_fixture)

CAF_TEST(an offset never stored is zero) {
  CAF_CHECK_EQUAL(offset("jetstream"), 0);
}

CAF_TEST(offsets round trip per name and are replaced) {
  CAF_REQUIRE_EQUAL(st->set_relay_offset("jetstream", 42).message, "");
  CAF_REQUIRE_EQUAL(st->set_relay_offset("other", 7).message, "");
  CAF_CHECK_EQUAL(offset("jetstream"), 42);
  CAF_CHECK_EQUAL(offset("other"), 7);
  // Replaced, also with a smaller value (an operator may rewind a relay on purpose).
  CAF_REQUIRE_EQUAL(st->set_relay_offset("jetstream", 9'000'000'000).message, "");
  CAF_CHECK_EQUAL(offset("jetstream"), 9'000'000'000);
  CAF_REQUIRE_EQUAL(st->set_relay_offset("jetstream", 3).message, "");
  CAF_CHECK_EQUAL(offset("jetstream"), 3);
  CAF_CHECK_EQUAL(offset("other"), 7);
}

CAF_TEST(offsets survive a reopen and do not touch the event log) {
  auto rs = commit_one(sreh::test::create_batch("run_relay1"));
  CAF_REQUIRE_EQUAL(rs.events.size(), 1u);
  CAF_REQUIRE_EQUAL(st->set_relay_offset("jetstream", rs.events[0].seq).message, "");
  reopen();
  CAF_CHECK_EQUAL(offset("jetstream"), rs.events[0].seq);
  CAF_CHECK_EQUAL(stats().events, 1);
  CAF_CHECK_EQUAL(stats().last_event_seq, rs.events[0].seq);
}

CAF_TEST(offsets are written while commits run) {
  std::atomic<bool> done{false};
  std::thread offsets{[&] {
    for (std::int64_t i = 1; i <= 200; ++i)
      if (auto err = st->set_relay_offset("jetstream", i))
        CAF_FAIL("set_relay_offset: " << err.message);
    done = true;
  }};
  int n = 0;
  while (!done.load() || n < 20)
    commit_one(sreh::test::create_batch("run_c" + sreh::test::pad(n++)));
  offsets.join();
  CAF_CHECK_EQUAL(offset("jetstream"), 200);
  CAF_CHECK_EQUAL(stats().events, n);
}

CAF_TEST_FIXTURE_SCOPE_END()
