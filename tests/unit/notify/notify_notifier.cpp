#define CAF_SUITE notify_notifier
#include <caf/test/unit_test.hpp>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

#include "actors/notify/notifier.hpp"
#include "core/base/clock.hpp"
#include "persistence/store/in_memory_store.hpp"

using namespace sreh;
using namespace std::chrono_literals;

namespace {

/// Records what it is asked to send; fails while `failing`.
class recording_transport final : public actors::notify_transport {
 public:
  sreh::error send(const notify::receiver& r, const notify::message& m) override {
    std::lock_guard lk{mtx};
    ++calls;
    cv.notify_all();
    if (failing)
      return {errc::unavailable, "receiver " + r.name + ": 127.0.0.1:9: connect: refused"};
    sent.push_back(m.headers.count("X-Sreh-Delivery") ? m.headers.at("X-Sreh-Delivery") : "");
    return {};
  }
  /// Waits (bounded) until `pred` holds under the lock.
  template <class Pred>
  bool wait(Pred pred) {
    std::unique_lock lk{mtx};
    return cv.wait_for(lk, 10s, [&] { return pred(); });
  }
  std::mutex mtx;
  std::condition_variable cv;
  std::vector<std::string> sent;
  int calls = 0;
  bool failing = false;
};

notify::settings webhook_to_all() {
  notify::settings s;
  notify::receiver r;
  r.name = "hook";
  r.url = "http://127.0.0.1:9/hook";
  s.receivers.push_back(r);
  notify::route rt;
  rt.receiver = "hook";
  s.routes.push_back(rt);
  s.poll_ms = 10;
  s.min_backoff_ms = 1;
  s.max_backoff_ms = 2;
  s.max_attempts = 3;
  return s;
}

void commit(persistence::store& st, const std::string& id, const std::string& kind) {
  std::vector<persistence::write_batch> batches(1);
  event e;
  e.id = id;
  e.run_id = "wrk_1";
  e.kind = kind;
  e.data = R"({"template":"incident","by":"alice"})";
  batches[0].events.push_back(e);
  auto res = st.commit(batches);
  CAF_REQUIRE(!res.at(0).err);
}

struct fixture {
  persistence::store_ptr store = persistence::make_in_memory_store();
  std::shared_ptr<recording_transport> transport = std::make_shared<recording_transport>();
  system_clock clock;

  std::unique_ptr<actors::notifier> make(notify::settings s = webhook_to_all()) {
    actors::notifier_options o;
    o.settings = std::move(s);
    o.link_base = "http://node";
    actors::notifier_stores stores{*store, *store, *store, *store, *store};
    return std::make_unique<actors::notifier>(stores, transport, nullptr, std::move(o), clock);
  }
  persistence::delivery_page list(std::optional<persistence::delivery_state> state = {}) {
    persistence::delivery_filter f;
    f.state = state;
    auto p = store->list_deliveries(f);
    CAF_REQUIRE(p);
    return *p;
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(notifier_tests, fixture)

CAF_TEST(events before the first start are history and notify nobody) {
  commit(*store, "evt_old", "work.created");
  auto n = make();
  CAF_REQUIRE(!n->start({}));
  commit(*store, "evt_new", "work.created");
  CAF_REQUIRE(transport->wait([&] { return transport->sent.size() >= 1; }));
  n->stop();
  CAF_CHECK_EQUAL(transport->sent, std::vector<std::string>{"evt_new.hook"});
  auto page = list();
  CAF_REQUIRE_EQUAL(page.deliveries.size(), 1u);
  CAF_CHECK(page.deliveries[0].state == persistence::delivery_state::delivered);
  CAF_CHECK_EQUAL(page.deliveries[0].event, "work.opened");
}

CAF_TEST(a restart resumes at the stored offset without sending again) {
  auto n = make();
  CAF_REQUIRE(!n->start({}));
  commit(*store, "evt_a", "work.created");
  CAF_REQUIRE(transport->wait([&] { return transport->sent.size() >= 1; }));
  n->stop();
  commit(*store, "evt_b", "work.created"); // committed while no notifier runs
  auto again = make();
  CAF_REQUIRE(!again->start({}));
  CAF_REQUIRE(transport->wait([&] { return transport->sent.size() >= 2; }));
  again->stop();
  CAF_CHECK_EQUAL(transport->sent, (std::vector<std::string>{"evt_a.hook", "evt_b.hook"}));
}

CAF_TEST(a receiver that always fails is dead lettered with its error) {
  transport->failing = true;
  auto n = make();
  CAF_REQUIRE(!n->start({}));
  commit(*store, "evt_f", "work.created");
  CAF_REQUIRE(transport->wait([&] { return transport->calls >= 3; }));
  n->stop(); // joins the thread: the third attempt (the last, max_attempts 3) is recorded
  auto failed = list(persistence::delivery_state::failed);
  CAF_REQUIRE_EQUAL(failed.deliveries.size(), 1u);
  CAF_CHECK_EQUAL(failed.deliveries[0].attempts, 3);
  CAF_CHECK(failed.deliveries[0].last_error.find("refused") != std::string::npos);
  CAF_CHECK_EQUAL(transport->calls, 3);
  CAF_CHECK(transport->sent.empty());
}

CAF_TEST(a repeat within the group interval is recorded as grouped and not sent) {
  auto s = webhook_to_all();
  s.routes[0].group_by = {"event"};
  s.routes[0].repeat_interval_s = 3600;
  // The notifier reads from seq 1 (a stored offset: the next seq), so both events are in its
  // first round, enqueued before anything is sent.
  CAF_REQUIRE(!store->set_relay_offset(actors::notifier::offset_name, 1));
  commit(*store, "evt_1", "work.created");
  commit(*store, "evt_2", "work.created");
  auto n = make(s);
  CAF_REQUIRE(!n->start({}));
  CAF_REQUIRE(transport->wait([&] { return transport->sent.size() >= 1; }));
  n->stop();
  CAF_CHECK_EQUAL(transport->sent, std::vector<std::string>{"evt_1.hook"});
  auto grouped = list(persistence::delivery_state::grouped);
  CAF_REQUIRE_EQUAL(grouped.deliveries.size(), 1u);
  CAF_CHECK_EQUAL(grouped.deliveries[0].id, "evt_2.hook");
}

CAF_TEST_FIXTURE_SCOPE_END()
