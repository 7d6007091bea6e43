#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "core/base/logger.hpp"
#include "core/base/metrics.hpp"
#include "net/http/beast.hpp"
#include "net/http/http_server.hpp"
#include "net/http/router.hpp"

namespace sreh::net {

/// Something the server can close on stop (an HTTP or SSE session).
class connection {
 public:
  virtual ~connection() = default;
  /// Thread-safe: closes the connection on its own strand.
  virtual void shutdown() = 0;

  /// Since when (steady clock, ns) the connection waits for a request header: idle between
  /// requests or with a header under way. 0: busy (a request in hand, an SSE stream); -1:
  /// chosen to be shed (server_core::claim_oldest_waiting), it closes instead of reading on.
  std::atomic<std::int64_t> waiting_since{0};
};

[[nodiscard]] inline std::int64_t steady_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
           std::chrono::steady_clock::now().time_since_epoch())
    .count();
}

/// The state shared by the server and its sessions. Sessions hold it by shared_ptr, so the
/// io_context outlives every socket even when a kernel callback keeps a session alive after the
/// server stopped.
///
/// Concurrency: `ctx`, `routes`, `tokens`, `log` are read-only after start; `connections`,
/// `stopping` and the counters are atomics; the registry and the per-client counts are guarded
/// by `mtx`.
struct server_core {
  explicit server_core(server_context c)
    : ctx(c), ioc(static_cast<int>(c.cfg.limits.http_threads)),
      handlers(static_cast<std::size_t>(std::max<std::int64_t>(1, c.cfg.limits.handler_threads))),
      log(sreh::logger("http")) {
    if (auto* m = c.metrics) {
      requests = &m->counter("sreh_http_requests_total",
                             "HTTP requests answered, by method, route and status code.",
                             {"method", "route", "code"});
      request_seconds =
        &m->histogram("sreh_http_request_duration_seconds",
                      "Time from a request's header to its answer, by route.", {"route"});
    }
  }

  server_context ctx;
  asio::io_context ioc;
  /// Runs the plain routes' handlers and the work they post (responder::post): everything that
  /// may block on the store stays off the HTTP threads.
  asio::thread_pool handlers;
  router routes;
  std::shared_ptr<const token_table> tokens; // never null after construction
  std::shared_ptr<spdlog::logger> log;
  std::atomic<std::int64_t> connections{0};
  std::atomic<bool> stopping{false};
  std::atomic<std::uint64_t> shed{0};    // idle or incomplete connections closed for newcomers
  std::atomic<std::uint64_t> limited{0}; // connections let ask only /healthz and /readyz
  std::atomic<std::uint64_t> header_timeouts{0}; // headers that did not arrive in time
  std::atomic<std::uint64_t> tls_refused{0};     // TLS handshakes that failed
  std::atomic<std::int64_t> overload_logged_ns{0};
  // Requests by method, route (the pattern, "unmatched" or "none" before routing) and status.
  metrics::family<metrics::counter>* requests = nullptr;
  metrics::family<metrics::histogram>* request_seconds = nullptr; // by route

  std::mutex mtx;
  std::uint64_t next_id = 1;
  struct entry {
    std::weak_ptr<connection> conn;
    std::string client;
  };
  std::map<std::uint64_t, entry> open;                      // by accept order
  std::unordered_map<std::string, std::int64_t> per_client; // open connections by address

  /// Asks every open connection to close.
  void close_all() {
    std::vector<std::shared_ptr<connection>> all;
    {
      std::lock_guard<std::mutex> lk(mtx);
      for (auto& [id, e] : open)
        if (auto c = e.conn.lock())
          all.push_back(std::move(c));
    }
    for (auto& c : all)
      c->shutdown();
  }

  /// The connection that has waited longest for a request header (of `client` only, when
  /// given), marked as chosen (-1) so that no other newcomer picks it too; null when every
  /// candidate is busy.
  std::shared_ptr<connection> claim_oldest_waiting(const std::string* client = nullptr) {
    // The live connections are copied out under the lock and scanned (and released) outside
    // it: a copy may be the last owner of a closing session, whose slot takes `mtx` again.
    std::vector<std::shared_ptr<connection>> alive;
    {
      std::lock_guard<std::mutex> lk(mtx);
      alive.reserve(open.size());
      for (auto& [id, e] : open)
        if (client == nullptr || e.client == *client)
          if (auto c = e.conn.lock())
            alive.push_back(std::move(c));
    }
    for (;;) {
      connection* best = nullptr;
      std::int64_t best_since = 0;
      for (const auto& c : alive) {
        auto since = c->waiting_since.load();
        if (since > 0 && (best == nullptr || since < best_since))
          best = c.get(), best_since = since;
      }
      if (best == nullptr)
        return nullptr;
      if (best->waiting_since.compare_exchange_strong(best_since, -1))
        for (auto& c : alive)
          if (c.get() == best)
            return std::move(c);
      // It got a request meanwhile: look again.
    }
  }

  /// Logs what overload defence did, at most every 10 s (an attack must not flood the log).
  void log_overload() {
    auto now = steady_now_ns();
    auto last = overload_logged_ns.load();
    if ((last != 0 && now - last < 10'000'000'000) ||
        !overload_logged_ns.compare_exchange_strong(last, now))
      return;
    log->warn("overload: {} connections open (limit {}, {} per client); so far {} idle or "
              "incomplete connections shed, {} limited to /healthz and /readyz, {} header "
              "timeouts",
              connections.load(), ctx.cfg.limits.max_connections,
              ctx.cfg.limits.max_connections_per_client, shed.load(), limited.load(),
              header_timeouts.load());
  }
};

/// One accepted connection's place in the count and the registry; moves from the HTTP session
/// to the SSE session that takes over its socket. Released when the last owner dies.
class connection_slot {
 public:
  connection_slot() = default;
  /// Counts a connection from `client` (its address).
  connection_slot(std::shared_ptr<server_core> core, std::string client) : core_(std::move(core)) {
    core_->connections.fetch_add(1);
    std::lock_guard<std::mutex> lk(core_->mtx);
    id_ = core_->next_id++;
    client_count_ = ++core_->per_client[client];
    core_->open[id_].client = std::move(client);
  }
  connection_slot(connection_slot&& o) noexcept
    : core_(std::move(o.core_)), id_(std::exchange(o.id_, 0)), client_count_(o.client_count_) {}
  connection_slot& operator=(connection_slot&& o) noexcept {
    if (this != &o) {
      release();
      core_ = std::move(o.core_);
      id_ = std::exchange(o.id_, 0);
      client_count_ = o.client_count_;
    }
    return *this;
  }
  connection_slot(const connection_slot&) = delete;
  connection_slot& operator=(const connection_slot&) = delete;
  ~connection_slot() { release(); }

  /// Registers (or re-registers) the connection that owns the slot, for close_all().
  void bind(std::weak_ptr<connection> c) {
    if (!core_)
      return;
    std::lock_guard<std::mutex> lk(core_->mtx);
    core_->open[id_].conn = std::move(c);
  }

  /// Connections open from this one's address when it was accepted, itself included.
  [[nodiscard]] std::int64_t client_connections() const { return client_count_; }

 private:
  void release() {
    if (!core_ || id_ == 0)
      return;
    {
      std::lock_guard<std::mutex> lk(core_->mtx);
      auto i = core_->open.find(id_);
      if (i != core_->open.end()) {
        auto n = core_->per_client.find(i->second.client);
        if (n != core_->per_client.end() && --n->second <= 0)
          core_->per_client.erase(n);
        core_->open.erase(i);
      }
    }
    core_->connections.fetch_sub(1);
    id_ = 0;
    core_.reset();
  }

  std::shared_ptr<server_core> core_;
  std::uint64_t id_ = 0;
  std::int64_t client_count_ = 0;
};

} // namespace sreh::net
