// The HTTP front as a child of the node's supervision tree: its io loop throws, the service
// supervisor replaces the server, and the API answers again on the same port; /v1/actors shows
// the restart.
#define CAF_SUITE front_supervised
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <optional>
#include <string>
#include <thread>

#include "actors/hub/event_hub.hpp"
#include "actors/runtime/service_supervisor.hpp"
#include "core/base/fault.hpp"
#include "net/http/http_front.hpp"
#include "tests/support/caf_test.hpp"
#include "tests/support/store_factory.hpp"

using namespace sreh;
using namespace std::chrono_literals;

namespace {

/// Polls `pred` every 5 ms until it holds; false after `timeout`.
template <class Pred>
bool eventually(Pred pred, std::chrono::milliseconds timeout = 20s) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (!pred()) {
    if (std::chrono::steady_clock::now() >= end)
      return false;
    std::this_thread::sleep_for(5ms);
  }
  return true;
}

/// A kernel that is always ready and refuses every request (the routes used here do not ask it).
class idle_kernel final : public actors::kernel_api {
 public:
  void submit(goal_request, std::function<void(expected<actors::submit_reply>)> done) override {
    done(sreh::error{errc::unavailable, "idle kernel"});
  }
  void cancel(std::string, std::string, std::function<void(expected<run_state>)> done) override {
    done(sreh::error{errc::unavailable, "idle kernel"});
  }
  void decide(std::string, approval_vote, std::function<void(expected<approval>)> done) override {
    done(sreh::error{errc::unavailable, "idle kernel"});
  }
  void fork(journal::fork_request,
            std::function<void(expected<actors::submit_reply>)> done) override {
    done(sreh::error{errc::unavailable, "idle kernel"});
  }
  void say(conversation::message, std::function<void(expected<actors::say_reply>)> done) override {
    done(sreh::error{errc::unavailable, "idle kernel"});
  }
  actors::kernel_stats stats() const override { return {}; }
  bool ready() const override { return true; }
  actors::cluster_view cluster() const override { return {}; }
};

/// A blocking TCP connection to 127.0.0.1:port (fd -1 when refused).
struct connection {
  int fd = -1;
  explicit connection(std::uint16_t port) {
    fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(port);
    timeval tv{10, 0}; // no read waits longer than that
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
      ::close(fd);
      fd = -1;
    }
  }
  ~connection() {
    if (fd >= 0)
      ::close(fd);
  }
  connection(const connection&) = delete;
  connection& operator=(const connection&) = delete;

  bool send(const std::string& path) {
    const auto req = "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    return ::send(fd, req.data(), req.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(req.size());
  }

  /// One response (status line, headers, Content-Length body); nullopt when the connection
  /// closed or timed out first.
  std::optional<std::pair<int, std::string>> response() {
    std::string buf;
    std::size_t body_at = std::string::npos, length = 0;
    for (;;) {
      if (body_at == std::string::npos && (body_at = buf.find("\r\n\r\n")) != std::string::npos) {
        body_at += 4;
        const auto cl = buf.find("Content-Length: ");
        length = cl == std::string::npos ? 0 : std::stoul(buf.substr(cl + 16));
      }
      if (body_at != std::string::npos && buf.size() >= body_at + length)
        return std::make_pair(std::stoi(buf.substr(9, 3)), buf.substr(body_at, length));
      char chunk[4096];
      const auto n = ::recv(fd, chunk, sizeof chunk, 0);
      if (n <= 0)
        return std::nullopt;
      buf.append(chunk, static_cast<std::size_t>(n));
    }
  }

  /// True when the server closed the connection (EOF within the read timeout).
  bool closed_by_server() {
    char c;
    return ::recv(fd, &c, 1, 0) == 0;
  }
};

/// GET `path` on a new connection: the response, or nullopt (refused, closed).
std::optional<std::pair<int, std::string>> get(std::uint16_t port, const std::string& path) {
  connection c{port};
  if (c.fd < 0 || !c.send(path))
    return std::nullopt;
  return c.response();
}

struct front_fixture {
  test::temp_dir dir;
  persistence::store_ptr store;
  idle_kernel kernel;
  actors::event_hub hub;
  config::node_config cfg;
  system_clock clock;
  id_generator ids{clock};
  caf::actor_system_config caf_cfg;
  std::unique_ptr<caf::actor_system> sys;
  actors::supervision_table table;
  actors::service_supervisor_actor sup;

  front_fixture() {
    (void)setup_logging("off", "text");
    auto s = persistence::open_sqlite_store({dir.path() + "/sreh.db"});
    if (!s)
      CAF_FAIL("cannot open the store: " << s.error().message);
    store = std::move(*s);
    cfg.auth.mode = "none";
    cfg.limits.http_threads = 1; // the thread that throws is the only one
    caf_cfg.set("logger.verbosity", caf::atom("quiet"));
    sys = std::make_unique<caf::actor_system>(caf_cfg);
    sup = actors::spawn_service_supervisor(*sys, table);
  }

  ~front_fixture() {
    if (sup)
      actors::stop_services(*sys, sup);
    sup = nullptr;
  }

  std::shared_ptr<net::http_front> front() {
    net::server_context ctx{*store, kernel, hub, cfg, clock, ids};
    ctx.tree = &table;
    return std::make_shared<net::http_front>(ctx, "127.0.0.1", 0);
  }

  actors::child_info row(const std::string& name) {
    for (auto& c : table.children())
      if (c.name == name)
        return c;
    return {};
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(front_supervised_tests, front_fixture)

CAF_TEST(a front whose io loop throws is replaced and answers again on the same port) {
  auto http = front();
  actors::restart_policy policy;
  policy.min_backoff = 10ms;
  CAF_REQUIRE_EQUAL(actors::supervise(sup, http, policy).message, "");
  const auto port = http->port();
  CAF_REQUIRE_NOT_EQUAL(port, 0);
  connection before{port}; // a keep-alive connection of the first server
  CAF_REQUIRE(before.fd >= 0 && before.send("/healthz"));
  auto ok = before.response();
  CAF_REQUIRE(ok.has_value());
  CAF_CHECK_EQUAL(ok->first, 200);

  arm_fault("http.io", 1);
  CAF_CHECK(!get(port, "/healthz").has_value()); // this request's header throws: no answer
  CAF_REQUIRE(eventually([&] {
    auto r = row("http_front");
    return r.restarts == 1 && r.state == actors::child_state::running;
  }));
  const auto restarted = row("http_front");
  CAF_CHECK_EQUAL(restarted.last_error, "the io loop threw: fault injected at http.io");
  CAF_CHECK(before.closed_by_server()); // the old server closed its connections
  CAF_CHECK_EQUAL(http->port(), port);
  std::optional<std::pair<int, std::string>> again;
  CAF_REQUIRE(eventually([&] { return (again = get(port, "/v1/actors")).has_value(); }));
  CAF_CHECK_EQUAL(again->first, 200);
  CAF_CHECK_EQUAL(again->second,
                  R"({"actors":[{"name":"http_front","parent":"services","state":"running",)"
                  R"("restarts":1,"last_error":"the io loop threw: fault injected at http.io"}]})");
}

CAF_TEST(a front that fails past its budget is given up on and listed as failed) {
  auto http = front();
  actors::restart_policy policy;
  policy.max_restarts = 0; // the first death is the last
  CAF_REQUIRE_EQUAL(actors::supervise(sup, http, policy).message, "");
  const auto port = http->port();
  arm_fault("http.io", 1);
  CAF_CHECK(!get(port, "/healthz").has_value());
  CAF_REQUIRE(eventually([&] { return row("http_front").state == actors::child_state::failed; }));
  CAF_CHECK(!get(port, "/healthz").has_value()); // nothing listens any more
  const auto failed = table.failed(); // a variable: CAF's checks compare through references
  CAF_REQUIRE_EQUAL(failed.size(), 1u);
  CAF_CHECK_EQUAL(failed[0].name, "http_front");
}

CAF_TEST(readiness names a child given up on) {
  auto http = front();
  CAF_REQUIRE_EQUAL(actors::supervise(sup, http).message, "");
  auto ready = get(http->port(), "/readyz");
  CAF_REQUIRE(ready.has_value());
  CAF_CHECK_EQUAL(ready->first, 200);
  table.add("relay", "services"); // as the supervisor records a relay that exhausted its budget
  table.died("relay", "the relay thread died: boom", false);
  auto unready = get(http->port(), "/readyz");
  CAF_REQUIRE(unready.has_value());
  CAF_CHECK_EQUAL(unready->first, 503);
  CAF_CHECK(unready->second.find("relay failed and is not restarted any more (0 restarts; last "
                                 "error: the relay thread died: boom)") != std::string::npos);
}

CAF_TEST_FIXTURE_SCOPE_END()
