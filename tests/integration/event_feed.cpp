// The event feed against a real NATS server (SREH_NATS_URL), a real relay and the store of
// SREH_TEST_STORE: every committed event reaches `deliver` once, in seq order, without gaps:
// with concurrent writers, with seqs missing from NATS (read from the store, or waited for),
// without a relay (the store is followed after the relay's silence), and across a restart of
// the NATS server mid-stream.
#define CAF_SUITE event_feed
#include "net/nats/event_feed.hpp"

#include "core/base/json.hpp"
#include "core/model/json_codecs.hpp"
#include "tests/support/caf_test.hpp"
#include "tests/support/relay_fixture.hpp"

using namespace sreh;
using namespace std::chrono_literals;
using sreh::test::eventually;

namespace {

/// What the feed delivered, in delivery order.
class collector {
 public:
  std::function<void(const std::vector<event>&)> fn() {
    return [this](const std::vector<event>& b) {
      {
        std::lock_guard lk{mtx_};
        events_.insert(events_.end(), b.begin(), b.end());
        ++batches_;
      }
      cv_.notify_all();
    };
  }

  /// Waits until an event of seq >= `seq` was delivered; false after `timeout`.
  bool wait_for(std::int64_t seq, std::chrono::seconds timeout) {
    std::unique_lock lk{mtx_};
    return cv_.wait_for(lk, timeout, [&] { return !events_.empty() && events_.back().seq >= seq; });
  }

  std::vector<event> events() {
    std::lock_guard lk{mtx_};
    return events_;
  }

  std::size_t batches() {
    std::lock_guard lk{mtx_};
    return batches_;
  }

 private:
  std::mutex mtx_;
  std::condition_variable cv_;
  std::vector<event> events_;
  std::size_t batches_ = 0;
};

/// Waits until the feed has delivered `seq` and counted it; false after `timeout`.
bool delivered(collector& got, const net::event_feed& feed, std::int64_t seq,
               std::chrono::seconds timeout) {
  return got.wait_for(seq, timeout) &&
         eventually([&] { return feed.stats().last_seq >= seq; }, timeout);
}

/// The store's events with from < seq <= to.
std::vector<event> store_events(persistence::store& st, std::int64_t from, std::int64_t to) {
  std::vector<event> out;
  persistence::event_filter f;
  f.after_seq = from;
  f.limit = 1'000;
  while (f.after_seq < to) {
    auto page = st.read_events(f);
    CAF_REQUIRE(page.has_value());
    if (page->empty())
      break;
    for (auto& e : *page)
      if (e.seq <= to)
        out.push_back(std::move(e));
    f.after_seq = page->back().seq;
  }
  return out;
}

/// The feed delivered exactly the events from+1..to of the store, in seq order, each once, and
/// each as the store has it.
void check_delivered(collector& got, persistence::store& st, std::int64_t from, std::int64_t to) {
  const auto evs = got.events();
  const auto want = store_events(st, from, to);
  CAF_CHECK_EQUAL(want.size(), static_cast<std::size_t>(to - from));
  CAF_CHECK_EQUAL(evs.size(), want.size());
  std::size_t wrong_seq = 0, wrong_content = 0;
  for (std::size_t i = 0; i < evs.size(); ++i) {
    if (evs[i].seq != from + 1 + static_cast<std::int64_t>(i))
      ++wrong_seq;
    else if (i < want.size() && json::to_json(evs[i]) != json::to_json(want[i]))
      ++wrong_content;
  }
  CAF_CHECK_EQUAL(wrong_seq, 0u);
  CAF_CHECK_EQUAL(wrong_content, 0u);
  if (wrong_seq > 0)
    for (std::size_t i = 0, shown = 0; i < evs.size() && shown < 5; ++i)
      if (evs[i].seq != from + 1 + static_cast<std::int64_t>(i)) {
        CAF_MESSAGE("delivery #" << i << " has seq " << evs[i].seq << ", expected "
                                 << from + 1 + static_cast<std::int64_t>(i));
        ++shown;
      }
}

/// Every message from NATS was either delivered or dropped as a duplicate (valid once the feed
/// is stopped and nothing above its position exists).
void check_accounting(const net::event_feed_stats& s) {
  CAF_MESSAGE("feed: received " << s.received << ", delivered " << s.delivered << ", duplicates "
                                << s.duplicates << ", from the store " << s.filled_from_store
                                << ", resets " << s.resets << ", last seq " << s.last_seq);
  CAF_CHECK_EQUAL(s.received - s.duplicates, s.delivered - s.filled_from_store);
}

struct feed_fixture : sreh::test::relay_fixture {
  feed_fixture() = default;
  explicit feed_fixture(std::string nats) : relay_fixture(std::move(nats)) {}

  net::event_feed_options feed_options() const {
    net::event_feed_options o;
    o.url = url;
    o.stream = stream;
    o.subject_prefix = prefix;
    o.client_name = "sreh-feed-test";
    o.gap_wait = 100ms;
    o.relay_silence = 2s;
    o.heartbeat = 500ms;
    return o;
  }

  /// Publishes the store's events of `seqs` (consecutive) as the relay does; all acked.
  void publish(net::jetstream_client& c, std::int64_t first, std::int64_t last_incl) {
    const auto evs = store_events(*st, first - 1, last_incl);
    CAF_REQUIRE_EQUAL(evs.size(), static_cast<std::size_t>(last_incl - first + 1));
    std::vector<std::string> bodies;
    std::vector<net::jetstream_message> msgs;
    bodies.reserve(evs.size());
    for (const auto& e : evs) {
      bodies.push_back(json::to_json(e));
      msgs.push_back({net::event_subject(prefix, e), e.id, e.seq, bodies.back()});
    }
    std::atomic<bool> cancel{false};
    const auto out = c.publish(msgs, cancel);
    CAF_REQUIRE_EQUAL(out.err.message, "");
    CAF_REQUIRE_EQUAL(out.acked_prefix, msgs.size());
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(event_feed_tests, feed_fixture)

CAF_TEST(events of concurrent writers reach the feed once in seq order) {
  net::relay r{*st, *st, &hub, options()};
  CAF_REQUIRE_EQUAL(r.start().message, "");
  write(2, 50, 2); // 200 events before the feed starts: it must not deliver them
  CAF_REQUIRE(wait_offset(r, 200));
  const auto start = last_seq();
  CAF_REQUIRE_EQUAL(start, 200);
  collector got;
  net::event_feed feed{*st, feed_options(), got.fn()};
  CAF_REQUIRE_EQUAL(feed.start(start).message, "");
  CAF_REQUIRE(eventually([&] { return feed.stats().connected; }, 10s));
  const auto w = write(4, 250, 4); // 4,000 events in group commits
  CAF_REQUIRE_EQUAL(w.failures, 0u);
  const auto last = last_seq();
  CAF_CHECK_EQUAL(last, start + 4'000);
  CAF_REQUIRE(wait_offset(r, last));
  CAF_REQUIRE(delivered(got, feed, last, 60s));
  feed.stop();
  r.stop();
  const auto s = feed.stats();
  check_accounting(s);
  CAF_CHECK_EQUAL(s.last_seq, last);
  CAF_CHECK_EQUAL(s.delivered, static_cast<std::uint64_t>(last - start));
  // Followed NATS, not the store: the relay was never silent for 2 s.
  CAF_CHECK_LESS(s.filled_from_store, static_cast<std::uint64_t>(last - start) / 2);
  CAF_CHECK_GREATER(s.received, static_cast<std::uint64_t>(last - start) / 2);
  CAF_CHECK_GREATER(got.batches(), 0u);
  check_delivered(got, *st, start, last);
}

CAF_TEST(seqs missing from nats are read from the store and delivered in order) {
  write(1, 10, 1); // seqs 1..10; no relay: the test publishes
  auto c = client();
  CAF_REQUIRE(c != nullptr);
  CAF_REQUIRE_EQUAL(c->ensure_stream().message, "");
  auto o = feed_options();
  o.relay_silence = 60s; // only the gap may make the feed read the store
  collector got;
  net::event_feed feed{*st, o, got.fn()};
  CAF_REQUIRE_EQUAL(feed.start(0).message, "");
  CAF_REQUIRE(eventually([&] { return feed.stats().connected; }, 10s));
  publish(*c, 1, 3);
  publish(*c, 6, 10); // 4 and 5 never came through NATS
  CAF_REQUIRE(delivered(got, feed, 10, 10s));
  auto s = feed.stats();
  CAF_CHECK_EQUAL(s.received, 8u);
  CAF_CHECK_EQUAL(s.filled_from_store, 2u);
  CAF_CHECK_EQUAL(s.duplicates, 0u);
  CAF_CHECK_EQUAL(s.delivered, 10u);
  // They come late (a relay's retry): dropped.
  publish(*c, 4, 5);
  CAF_REQUIRE(eventually([&] { return feed.stats().received == 10; }, 10s));
  feed.stop();
  s = feed.stats();
  CAF_CHECK_EQUAL(s.duplicates, 2u);
  CAF_CHECK_EQUAL(s.delivered, 10u);
  check_accounting(s);
  check_delivered(got, *st, 0, 10);
}

CAF_TEST(a seq missing from nats and the store is waited for and never skipped) {
  write(1, 10, 1);
  auto c = client();
  CAF_REQUIRE(c != nullptr);
  CAF_REQUIRE_EQUAL(c->ensure_stream().message, "");
  sreh::test::gap_store gappy{*st};
  gappy.hide(5); // "not committed yet" as far as the feed can see
  auto o = feed_options();
  o.gap_wait = 50ms;
  o.relay_silence = 60s;
  collector got;
  net::event_feed feed{gappy, o, got.fn()};
  CAF_REQUIRE_EQUAL(feed.start(0).message, "");
  CAF_REQUIRE(eventually([&] { return feed.stats().connected; }, 10s));
  publish(*c, 1, 4);
  publish(*c, 6, 10);
  CAF_REQUIRE(delivered(got, feed, 4, 10s));
  CAF_REQUIRE(eventually([&] { return feed.stats().received == 9; }, 10s));
  // Many gap_waits later (a check that nothing happens, not a synchronization): still at 4.
  std::this_thread::sleep_for(500ms);
  CAF_CHECK_EQUAL(feed.stats().last_seq, 4);
  CAF_CHECK_EQUAL(got.events().size(), 4u);
  gappy.release();
  CAF_REQUIRE(delivered(got, feed, 10, 10s));
  feed.stop();
  const auto s = feed.stats();
  CAF_CHECK_EQUAL(s.filled_from_store, 1u);
  CAF_CHECK_EQUAL(s.delivered, 10u);
  check_accounting(s);
  check_delivered(got, *st, 0, 10);
}

CAF_TEST(without a relay the feed follows the store and then nats once the relay runs) {
  write(1, 20, 1); // seqs 1..20; no relay, no stream yet
  auto o = feed_options();
  o.gap_wait = 50ms;
  o.relay_silence = 300ms;
  collector got;
  net::event_feed feed{*st, o, got.fn()};
  CAF_REQUIRE_EQUAL(feed.start(5).message, "");
  CAF_REQUIRE(delivered(got, feed, 20, 10s));
  auto s = feed.stats();
  CAF_CHECK_EQUAL(s.filled_from_store, 15u);
  CAF_CHECK_EQUAL(s.received, 0u);
  CAF_CHECK(!s.connected); // the stream does not exist: not subscribed
  net::relay r{*st, *st, &hub, options()};
  CAF_REQUIRE_EQUAL(r.start().message, "");
  CAF_REQUIRE(wait_offset(r, 20));
  CAF_REQUIRE(eventually([&] { return feed.stats().connected; }, 10s));
  CAF_REQUIRE(eventually([&] { return feed.stats().received > 0; }, 10s));
  write(2, 20, 1); // 40 more, through the relay
  const auto last = last_seq();
  CAF_CHECK_EQUAL(last, 60);
  CAF_REQUIRE(wait_offset(r, last));
  CAF_REQUIRE(delivered(got, feed, last, 30s));
  feed.stop();
  r.stop();
  s = feed.stats();
  check_accounting(s);
  CAF_CHECK_EQUAL(s.delivered, 55u);
  check_delivered(got, *st, 5, last);
}

CAF_TEST_FIXTURE_SCOPE_END()

namespace {

/// The feed fixture on a NATS server of the test's own, restarted in place.
using restart_fixture = sreh::test::own_server_fixture<feed_fixture>;

} // namespace

CAF_TEST_FIXTURE_SCOPE(event_feed_restart_tests, restart_fixture)

CAF_TEST(a restart of the nats server mid - stream loses nothing and repeats nothing) {
  auto ro = f->options();
  ro.page_size = 200;
  net::relay r{*f->st, *f->st, &f->hub, ro};
  CAF_REQUIRE_EQUAL(r.start().message, "");
  auto o = f->feed_options();
  o.relay_silence = 500ms;
  collector got;
  net::event_feed feed{*f->st, o, got.fn()};
  CAF_REQUIRE_EQUAL(feed.start(0).message, "");
  // Writers commit all along: before, during and after the outage.
  std::atomic<bool> writing{true};
  std::atomic<std::size_t> write_failures{0};
  std::thread writers{[&] {
    while (writing.load())
      write_failures += f->write(2, 10, 2, 1ms).failures; // 40 events a round
  }};
  CAF_REQUIRE(delivered(got, feed, 400, 30s));
  server.stop(); // mid-stream
  CAF_CHECK(eventually([&] { return !feed.stats().connected; }, 10s));
  // Committed while NATS is down: delivered from the store after the relay's silence.
  const auto w = f->write(1, 50, 2);
  CAF_REQUIRE_EQUAL(w.failures, 0u);
  const auto during = f->last_seq();
  CAF_REQUIRE(delivered(got, feed, during, 30s));
  CAF_CHECK(!feed.stats().connected);
  const auto down = feed.stats();
  CAF_CHECK_GREATER(down.filled_from_store, 0u);
  server.start();
  // The ordered consumer is re-created after the restart and NATS brings new events again.
  CAF_CHECK(eventually([&] { return feed.stats().resets > 0; }, 30s));
  CAF_CHECK(eventually([&] { return feed.stats().connected; }, 30s));
  CAF_CHECK(eventually([&] { return feed.stats().received > down.received + 200; }, 30s));
  writing = false;
  writers.join();
  CAF_CHECK_EQUAL(write_failures.load(), 0u);
  const auto last = f->last_seq();
  CAF_CHECK_GREATER(last, during);
  CAF_REQUIRE(f->wait_offset(r, last, std::chrono::seconds{60}));
  CAF_REQUIRE(delivered(got, feed, last, 60s));
  feed.stop();
  r.stop();
  const auto s = feed.stats();
  check_accounting(s);
  CAF_CHECK_EQUAL(s.delivered, static_cast<std::uint64_t>(last));
  CAF_CHECK_EQUAL(s.last_seq, last);
  check_delivered(got, *f->st, 0, last);
  f->check_stream();
}

CAF_TEST(a feed stops promptly while its server is down) {
  net::relay r{*f->st, *f->st, &f->hub, f->options()};
  CAF_REQUIRE_EQUAL(r.start().message, "");
  auto o = f->feed_options();
  o.relay_silence = 300ms;
  collector got;
  net::event_feed feed{*f->st, o, got.fn()};
  CAF_REQUIRE_EQUAL(feed.start(0).message, "");
  f->write(1, 10, 2);
  CAF_REQUIRE(delivered(got, feed, 20, 30s));
  CAF_REQUIRE(eventually([&] { return feed.stats().connected; }, 10s));
  server.stop();
  r.stop();
  CAF_REQUIRE(eventually([&] { return !feed.stats().connected; }, 10s));
  f->write(1, 10, 2); // followed from the store meanwhile
  CAF_REQUIRE(delivered(got, feed, 40, 30s));
  const auto t0 = std::chrono::steady_clock::now();
  feed.stop(); // the consumer cannot be deleted: bounded by api_wait (2 s)
  const auto took = std::chrono::steady_clock::now() - t0;
  CAF_MESSAGE("stop took " << std::chrono::duration_cast<std::chrono::milliseconds>(took).count()
                           << " ms");
  CAF_CHECK_LESS(took, std::chrono::milliseconds{4'000});
  check_delivered(got, *f->st, 0, 40);
  server.start(); // for the fixture's clean-up
}

CAF_TEST_FIXTURE_SCOPE_END()
