// The node's supervision of services: restart budget and backoff, restarts of a service that
// reports a failure, a child given up on, a first start that fails, the order of the stop. On a
// real actor system (the children are detached actors); waits poll with a deadline.
#define CAF_SUITE supervision
#include "actors/runtime/supervision.hpp"

#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "actors/runtime/service_supervisor.hpp"
#include "core/base/logger.hpp"
#include "tests/support/caf_test.hpp"

using namespace sreh;
using namespace sreh::actors;
using namespace std::chrono_literals;

namespace {

/// Polls `pred` every millisecond until it holds; false after `timeout`.
template <class Pred>
bool eventually(Pred pred, std::chrono::milliseconds timeout = 10s) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (!pred()) {
    if (std::chrono::steady_clock::now() >= end)
      return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

/// What the fake services did, in order ("a start", "a stop"), shared by several of them.
struct journal {
  std::mutex mtx;
  std::vector<std::string> lines;
  void add(std::string s) {
    std::lock_guard lk{mtx};
    lines.push_back(std::move(s));
  }
  std::vector<std::string> get() {
    std::lock_guard lk{mtx};
    return lines;
  }
};

/// A service that runs nothing: `crash` reports a failure as its thread would; the starts
/// numbered in `refuse` fail.
class fake_service final : public service {
 public:
  fake_service(std::string name, journal& j, std::vector<int> refuse = {})
    : name_(std::move(name)), journal_(j), refuse_(std::move(refuse)) {}

  std::string name() const override { return name_; }

  sreh::error start(failure_handler failed) override {
    std::lock_guard lk{mtx_};
    ++starts_;
    journal_.add(name_ + " start");
    for (int n : refuse_)
      if (n == starts_)
        return {errc::unavailable, "start " + std::to_string(n) + " refused"};
    if (running_)
      ++overlaps_;
    running_ = true;
    failed_ = std::move(failed);
    return {};
  }

  void stop() override {
    std::lock_guard lk{mtx_};
    ++stops_;
    journal_.add(name_ + " stop");
    running_ = false;
    failed_ = nullptr;
  }

  /// Reports a failure, as an exception escaping the service's loop would.
  void crash(std::string why) {
    failure_handler h;
    {
      std::lock_guard lk{mtx_};
      h = failed_;
    }
    CAF_REQUIRE(h != nullptr);
    h(std::move(why));
  }

  int starts() {
    std::lock_guard lk{mtx_};
    return starts_;
  }
  int stops() {
    std::lock_guard lk{mtx_};
    return stops_;
  }
  bool running() {
    std::lock_guard lk{mtx_};
    return running_;
  }
  int overlaps() {
    std::lock_guard lk{mtx_};
    return overlaps_;
  }

 private:
  std::string name_;
  journal& journal_;
  std::vector<int> refuse_;
  std::mutex mtx_;
  int starts_ = 0;
  int stops_ = 0;
  int overlaps_ = 0; // a start while running: never
  bool running_ = false;
  failure_handler failed_;
};

struct quiet_config {
  caf::actor_system_config cfg;
  quiet_config() {
    cfg.set("scheduler.max-threads", std::size_t{2});
    cfg.set("logger.verbosity", caf::atom("quiet"));
  }
};

struct supervision_fixture : quiet_config {
  caf::actor_system sys{cfg};
  supervision_table table;
  service_supervisor_actor sup;
  journal j;

  supervision_fixture() {
    (void)setup_logging("off", "text");
    sup = spawn_service_supervisor(sys, table);
  }
  ~supervision_fixture() {
    if (sup)
      stop_services(sys, sup);
    sup = nullptr;
  }

  child_info row(const std::string& name) {
    for (auto& c : table.children())
      if (c.name == name)
        return c;
    return {};
  }

  /// A policy fast enough for tests: 1 ms, doubling to 4 ms, `n` restarts per minute.
  static restart_policy fast(int n = 5) {
    restart_policy p;
    p.min_backoff = 1ms;
    p.max_backoff = 4ms;
    p.max_restarts = n;
    return p;
  }
};

} // namespace

CAF_TEST(the backoff doubles from its minimum up to its cap) {
  restart_policy p;
  p.min_backoff = 100ms;
  p.max_backoff = 500ms;
  p.max_restarts = 10;
  restart_budget b{p};
  const auto t = std::chrono::steady_clock::now();
  std::vector<std::int64_t> waits;
  for (int i = 0; i < 5; ++i) {
    auto w = b.on_failure(t + std::chrono::seconds{i});
    CAF_REQUIRE(w.has_value());
    waits.push_back(w->count());
  }
  CAF_CHECK_EQUAL(waits, (std::vector<std::int64_t>{100, 200, 400, 500, 500}));
}

CAF_TEST(the budget is spent after max_restarts within the window and refills after it) {
  restart_policy p;
  p.min_backoff = 10ms;
  p.max_restarts = 3;
  p.window = 60s;
  restart_budget b{p};
  const auto t = std::chrono::steady_clock::now();
  CAF_CHECK(b.on_failure(t).has_value());
  CAF_CHECK(b.on_failure(t + 1s).has_value());
  CAF_CHECK(b.on_failure(t + 2s).has_value());
  CAF_CHECK(!b.on_failure(t + 3s).has_value()); // the fourth within a minute: given up
  // A minute after the first restart, one slot is free again, and the wait starts over low.
  auto w = b.on_failure(t + 60500ms);
  CAF_REQUIRE(w.has_value());
  CAF_CHECK_EQUAL(w->count(), 40); // two restarts still in the window: the third wait
  auto later = b.on_failure(t + 200s);
  CAF_REQUIRE(later.has_value());
  CAF_CHECK_EQUAL(later->count(), 10);
}

CAF_TEST_FIXTURE_SCOPE(supervision_tests, supervision_fixture)

CAF_TEST(a service that reports a failure is stopped and started again) {
  auto svc = std::make_shared<fake_service>("front", j);
  CAF_REQUIRE_EQUAL(supervise(sup, svc, fast()).message, "");
  const auto first = row("front"); // a variable: CAF's checks compare through references
  CAF_CHECK_EQUAL(to_string(first.state), std::string{"running"});
  CAF_CHECK_EQUAL(first.parent, "services");
  svc->crash("the io loop threw: boom");
  CAF_REQUIRE(eventually([&] { return svc->starts() == 2 && svc->running(); }));
  CAF_REQUIRE(eventually([&] { return row("front").state == child_state::running; }));
  auto r = row("front");
  CAF_CHECK_EQUAL(r.restarts, 1);
  CAF_CHECK_EQUAL(r.last_error, "the io loop threw: boom");
  CAF_CHECK_EQUAL(svc->stops(), 1);
  CAF_CHECK_EQUAL(svc->overlaps(), 0);
  CAF_CHECK(table.failed().empty());
}

CAF_TEST(a service that keeps failing is given up on once its budget is spent) {
  auto svc = std::make_shared<fake_service>("relay", j);
  CAF_REQUIRE_EQUAL(supervise(sup, svc, fast(2)).message, "");
  for (int start = 1; start <= 3; ++start) {
    CAF_REQUIRE(eventually([&] { return svc->starts() == start && svc->running(); }));
    CAF_REQUIRE(eventually([&] { return row("relay").state == child_state::running; }));
    svc->crash("crash " + std::to_string(start));
  }
  CAF_REQUIRE(eventually([&] { return row("relay").state == child_state::failed; }));
  auto failed = table.failed();
  CAF_REQUIRE_EQUAL(failed.size(), 1u);
  CAF_CHECK_EQUAL(failed[0].name, "relay");
  CAF_CHECK_EQUAL(failed[0].restarts, 2);
  CAF_CHECK_EQUAL(failed[0].last_error, "crash 3");
  CAF_CHECK_EQUAL(svc->starts(), 3); // the first start and two restarts, no more
  CAF_CHECK_EQUAL(svc->stops(), 3);
  CAF_CHECK(!svc->running());
}

CAF_TEST(a restart whose start fails counts as a death and is retried after a backoff) {
  auto svc = std::make_shared<fake_service>("front", j, std::vector<int>{2});
  CAF_REQUIRE_EQUAL(supervise(sup, svc, fast()).message, "");
  svc->crash("boom");
  CAF_REQUIRE(eventually([&] { return svc->starts() == 3 && svc->running(); }));
  CAF_REQUIRE(eventually([&] { return row("front").state == child_state::running; }));
  auto r = row("front");
  CAF_CHECK_EQUAL(r.restarts, 2);
  CAF_CHECK_EQUAL(r.last_error, "cannot start: start 2 refused");
}

CAF_TEST(a first start that fails is an error of supervise and is not supervised) {
  auto svc = std::make_shared<fake_service>("front", j, std::vector<int>{1});
  auto err = supervise(sup, svc, fast());
  CAF_CHECK_EQUAL(err.code, errc::unavailable);
  CAF_CHECK_EQUAL(err.message, "start 1 refused");
  CAF_REQUIRE(eventually([&] { return table.children().empty(); }));
  CAF_CHECK_EQUAL(svc->starts(), 1);
  CAF_CHECK_EQUAL(svc->stops(), 0);
  // The name is free again.
  auto again = std::make_shared<fake_service>("front", j);
  CAF_CHECK_EQUAL(supervise(sup, again, fast()).message, "");
}

CAF_TEST(two services of one name are refused) {
  CAF_REQUIRE_EQUAL(supervise(sup, std::make_shared<fake_service>("relay", j)).message, "");
  auto err = supervise(sup, std::make_shared<fake_service>("relay", j));
  CAF_CHECK_EQUAL(err.code, errc::conflict);
}

CAF_TEST(the stop stops every service once the newest first and waits for them) {
  auto relay = std::make_shared<fake_service>("relay", j);
  auto front = std::make_shared<fake_service>("front", j);
  CAF_REQUIRE_EQUAL(supervise(sup, relay).message, "");
  CAF_REQUIRE_EQUAL(supervise(sup, front).message, "");
  stop_services(sys, sup);
  sup = nullptr;
  CAF_CHECK_EQUAL(
    j.get(), (std::vector<std::string>{"relay start", "front start", "front stop", "relay stop"}));
  for (auto& c : table.children())
    CAF_CHECK_EQUAL(to_string(c.state), std::string{"stopped"});
}

CAF_TEST(a service waiting for its restart is not started again by a stop) {
  restart_policy slow;
  slow.min_backoff = 10min; // the restart would come long after the test
  slow.max_backoff = 10min;
  auto svc = std::make_shared<fake_service>("relay", j);
  CAF_REQUIRE_EQUAL(supervise(sup, svc, slow).message, "");
  svc->crash("boom");
  CAF_REQUIRE(eventually([&] { return row("relay").state == child_state::restarting; }));
  stop_services(sys, sup);
  sup = nullptr;
  CAF_CHECK_EQUAL(svc->starts(), 1);
  CAF_CHECK_EQUAL(svc->stops(), 1);
  const auto stopped = row("relay");
  CAF_CHECK_EQUAL(to_string(stopped.state), std::string{"stopped"});
}

CAF_TEST_FIXTURE_SCOPE_END()
