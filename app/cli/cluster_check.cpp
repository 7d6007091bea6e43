// `sreh cluster check`: validates a topology file and probes its nodes with plain TCP connects.

#include "app/cli/cluster_check.hpp"

#include <fmt/format.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <future>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "config/node/node_config.hpp"

namespace sreh::app {

namespace {

constexpr const char* cluster_usage = "usage: sreh cluster check TOPOLOGY_FILE [--timeout-ms N]\n";

/// The outcome of one probe: "" when the address accepted a connection, else why not.
using probe_result = std::string;

/// strerror, starting lower-case to read as part of a sentence ("connection refused").
std::string errno_text(int code) {
  std::string s = std::strerror(code);
  if (!s.empty() && s[0] >= 'A' && s[0] <= 'Z' && !(s.size() > 1 && s[1] >= 'A' && s[1] <= 'Z'))
    s[0] = static_cast<char>(s[0] - 'A' + 'a');
  return s;
}

/// Closes a socket when it goes out of scope.
struct socket_guard {
  int fd;
  explicit socket_guard(int f) : fd(f) {}
  socket_guard(const socket_guard&) = delete;
  socket_guard& operator=(const socket_guard&) = delete;
  ~socket_guard() {
    if (fd >= 0)
      ::close(fd);
  }
};

/// Connects to one resolved address within `timeout_ms` (non-blocking connect, then poll).
probe_result connect_one(const addrinfo& ai, int timeout_ms) {
  socket_guard s{
    ::socket(ai.ai_family, ai.ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai.ai_protocol)};
  if (s.fd < 0)
    return errno_text(errno);
  int fd = s.fd;
  if (::connect(fd, ai.ai_addr, ai.ai_addrlen) == 0)
    return {};
  if (errno != EINPROGRESS)
    return errno_text(errno);
  pollfd p{fd, POLLOUT, 0};
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds{timeout_ms};
  int n = 0;
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
    n = ::poll(&p, 1, static_cast<int>(std::max<std::int64_t>(left.count(), 0)));
    if (n >= 0 || errno != EINTR)
      break;
  }
  if (n < 0)
    return errno_text(errno);
  if (n == 0)
    return fmt::format("no answer within {} ms", timeout_ms);
  int err = 0;
  socklen_t len = sizeof err;
  if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
    return errno_text(errno);
  return err == 0 ? probe_result{} : errno_text(err);
}

/// Resolves `address` (host:port, already validated) and tries each of its addresses in turn.
probe_result probe(const std::string& address, int timeout_ms) {
  std::string host;
  std::uint16_t port = 0;
  if (auto err = config::parse_listen(address, "address", host, port))
    return err.message;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found); rc != 0)
    return fmt::format("cannot resolve '{}': {}", host, ::gai_strerror(rc));
  std::unique_ptr<addrinfo, void (*)(addrinfo*)> owned{found, ::freeaddrinfo};
  probe_result why;
  for (const auto* ai = found; ai != nullptr; ai = ai->ai_next) {
    why = connect_one(*ai, timeout_ms);
    if (why.empty())
      return why;
  }
  return why;
}

std::string header(const config::topology& t) {
  return fmt::format("cluster '{}' ({}): {} node(s); heartbeat {} ms, lease ttl {} ms, "
                     "connection timeout {} ms",
                     t.name, t.source, t.nodes.size(), t.heartbeat_ms, t.lease_ttl_ms,
                     t.connection_timeout_ms);
}

/// Column widths so that the per-node lines align.
struct widths {
  std::size_t id = 0, http = 0, cluster = 0;
  explicit widths(const config::topology& t) {
    for (const auto& m : t.nodes) {
      id = std::max(id, m.id.size());
      http = std::max(http, m.http.size());
      cluster = std::max(cluster, m.cluster.size());
    }
  }
};

/// Parses `check FILE [--timeout-ms N]`; false on a usage error (already reported).
bool parse_args(int argc, char** argv, std::string& file, std::int64_t& timeout_ms) {
  if (argc < 1 || std::string_view{argv[0]} != "check") {
    std::fputs(cluster_usage, stderr);
    return false;
  }
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a == "--timeout-ms") {
      std::string_view v = i + 1 < argc ? argv[++i] : "";
      auto res = std::from_chars(v.data(), v.data() + v.size(), timeout_ms);
      if (v.empty() || res.ec != std::errc{} || res.ptr != v.data() + v.size() || timeout_ms < 1 ||
          timeout_ms > 600'000) {
        std::fprintf(stderr,
                     "sreh cluster check: --timeout-ms needs a number of milliseconds "
                     "between 1 and 600000\n%s",
                     cluster_usage);
        return false;
      }
    } else if (a.starts_with("-") || !file.empty()) {
      std::fprintf(stderr, "sreh cluster check: unexpected argument '%s'\n%s", argv[i],
                   cluster_usage);
      return false;
    } else {
      file = a;
    }
  }
  if (file.empty())
    std::fputs(cluster_usage, stderr);
  return !file.empty();
}

} // namespace

void print_topology(const config::topology& t, std::string_view this_node) {
  std::printf("%s\n", header(t).c_str());
  widths w{t};
  for (const auto& m : t.nodes)
    std::printf("%s\n", fmt::format("  {:<{}}  http {:<{}}  cluster {:<{}}  roles {}{}", m.id, w.id,
                                    m.http, w.http, m.cluster, w.cluster, fmt::join(m.roles, ","),
                                    m.id == this_node ? "  (this node)" : "")
                          .c_str());
}

int cluster_command(int argc, char** argv) {
  std::string file;
  std::int64_t timeout_ms = 0;
  if (!parse_args(argc, argv, file, timeout_ms))
    return 2;
  auto t = config::load_topology(file);
  if (!t) {
    std::fprintf(stderr, "%s\n", t.error().message.c_str());
    return 1;
  }
  if (timeout_ms == 0)
    timeout_ms = t->connection_timeout_ms;
  // Probe every address at once, so that hung peers cost one timeout, not one each.
  std::vector<std::future<probe_result>> probes;
  for (const auto& m : t->nodes)
    for (const auto* address : {&m.http, &m.cluster})
      probes.push_back(
        std::async(std::launch::async, probe, *address, static_cast<int>(timeout_ms)));
  std::printf("%s\n", header(*t).c_str());
  widths w{*t};
  auto state = [](const probe_result& r) { return r.empty() ? "reachable" : "unreachable"; };
  std::vector<std::string> failures;
  for (std::size_t i = 0; i < t->nodes.size(); ++i) {
    const auto& m = t->nodes[i];
    auto http = probes[2 * i].get();
    auto cluster = probes[2 * i + 1].get();
    std::printf("%s\n",
                fmt::format("  {:<{}}  http {:<{}} {}{}  cluster {:<{}} {}{}", m.id, w.id, m.http,
                            w.http, state(http), http.empty() ? "" : " (" + http + ")", m.cluster,
                            w.cluster, state(cluster), cluster.empty() ? "" : " (" + cluster + ")")
                  .c_str());
    for (auto [kind, address, why] :
         {std::tuple{"http", &m.http, &http}, std::tuple{"cluster", &m.cluster, &cluster}})
      if (!why->empty())
        failures.push_back(
          fmt::format("node '{}': {} address {} is unreachable: {}", m.id, kind, *address, *why));
  }
  for (const auto& f : failures)
    std::fprintf(stderr, "sreh cluster check: %s\n", f.c_str());
  if (failures.empty())
    std::printf("all %zu addresses reachable\n", 2 * t->nodes.size());
  return failures.empty() ? 0 : 1;
}

} // namespace sreh::app
