// Two relays on one PostgreSQL event log (two nodes of a cluster) behind the relay lock, with
// writers committing concurrently: only one publishes at a time, and when it goes (mid-page) the
// other takes over from the stored offset; JetStream holds every event exactly once, in order.
// Needs SREH_PG_URL and SREH_NATS_URL (scripts/test.sh sets both).
#define CAF_SUITE cluster_relay_pg
#include <cstdlib>

#include "tests/support/caf_test.hpp"
#include "tests/support/relay_fixture.hpp"

using namespace sreh;
using namespace std::chrono_literals;

namespace {

/// The relay fixture on the PostgreSQL store, whatever SREH_TEST_STORE says.
struct pg_relay_fixture {
  std::string saved;
  std::unique_ptr<sreh::test::relay_fixture> f;
  persistence::postgres_options opts;

  pg_relay_fixture() {
    const char* url = std::getenv("SREH_PG_URL");
    if (url == nullptr || *url == '\0')
      CAF_FAIL("cluster_relay_pg needs SREH_PG_URL (scripts/test.sh starts PostgreSQL)");
    if (const char* v = std::getenv("SREH_TEST_STORE"))
      saved = v;
    ::setenv("SREH_TEST_STORE", "postgres", 1);
    f = std::make_unique<sreh::test::relay_fixture>();
    opts.url = url;
    opts.schema = sreh::test::test_pg_schema(f->dir.path());
    opts.pool_size = 1;
  }

  ~pg_relay_fixture() {
    f.reset();
    if (saved.empty())
      ::unsetenv("SREH_TEST_STORE");
    else
      ::setenv("SREH_TEST_STORE", saved.c_str(), 1);
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(cluster_relay_pg_tests, pg_relay_fixture)

CAF_TEST(one relay is active and the other takes over from the offset) {
  auto o = f->options();
  o.page_size = 200;
  auto lock_a = persistence::make_postgres_relay_lock(opts, o.name);
  auto lock_b = persistence::make_postgres_relay_lock(opts, o.name);
  auto a = std::make_unique<net::relay>(*f->st, *f->st, nullptr, o, lock_a.get());
  auto b = std::make_unique<net::relay>(*f->st, *f->st, nullptr, o, lock_b.get());
  CAF_REQUIRE_EQUAL(a->start().message, "");
  CAF_REQUIRE_EQUAL(b->start().message, "");
  std::atomic<bool> writing{true};
  std::atomic<int> both_active{0};
  std::thread writers{[&] {
    f->write(4, 400, 2, 500us); // 3,200 events, interleaved commits of four writers
    writing = false;
  }};
  // Sample who is active while the log grows: never both.
  const auto until = std::chrono::steady_clock::now() + 30s;
  net::relay* leader = nullptr;
  while (std::chrono::steady_clock::now() < until) {
    const bool aa = a->stats().active, ba = b->stats().active;
    if (aa && ba)
      ++both_active;
    const auto off = std::max(a->stats().offset, b->stats().offset);
    if ((aa || ba) && off >= 600) {
      leader = aa ? a.get() : b.get();
      break;
    }
    std::this_thread::sleep_for(1ms);
  }
  CAF_REQUIRE(leader != nullptr);
  CAF_CHECK_EQUAL(both_active.load(), 0);
  // The leader goes away mid-stream (its session closes, which frees the lock).
  auto& gone = leader == a.get() ? a : b;
  auto& lock_gone = leader == a.get() ? lock_a : lock_b;
  auto& survivor = leader == a.get() ? b : a;
  const auto before = gone->stats();
  gone->stop();
  lock_gone->release();
  CAF_MESSAGE("leader stopped at offset " << before.offset << " after publishing "
                                          << before.published);
  writers.join();
  const auto last = f->last_seq();
  CAF_CHECK_EQUAL(last, 3'200);
  CAF_REQUIRE(f->wait_offset(*survivor, last, std::chrono::seconds{60}));
  const auto s = survivor->stats();
  CAF_CHECK(s.active);
  CAF_CHECK_LESS(before.offset, last);
  CAF_MESSAGE("survivor: published " << s.published << ", duplicates " << s.duplicates);
  survivor->stop();
  f->check_stream(); // every event exactly once, in seq order
}

CAF_TEST_FIXTURE_SCOPE_END()
