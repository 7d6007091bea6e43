#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "core/base/logger.hpp"
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
};

/// The state shared by the server and its sessions. Sessions hold it by shared_ptr, so the
/// io_context outlives every socket even when a kernel callback keeps a session alive after the
/// server stopped.
///
/// Concurrency: `ctx`, `routes`, `tokens`, `log` are read-only after start; `connections`,
/// `stopping` are atomics; the registry is guarded by `mtx`.
struct server_core {
  explicit server_core(server_context c)
    : ctx(c), ioc(static_cast<int>(c.cfg.limits.http_threads)),
      handlers(static_cast<std::size_t>(std::max<std::int64_t>(1, c.cfg.limits.handler_threads))),
      log(sreh::logger("http")) {}

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

  std::mutex mtx;
  std::uint64_t next_id = 1;
  std::unordered_map<std::uint64_t, std::weak_ptr<connection>> open;

  /// Asks every open connection to close.
  void close_all() {
    std::vector<std::shared_ptr<connection>> all;
    {
      std::lock_guard<std::mutex> lk(mtx);
      for (auto& [id, w] : open)
        if (auto c = w.lock())
          all.push_back(std::move(c));
    }
    for (auto& c : all)
      c->shutdown();
  }
};

/// One accepted connection's place in the count and the registry; moves from the HTTP session
/// to the SSE session that takes over its socket. Released when the last owner dies.
class connection_slot {
 public:
  connection_slot() = default;
  explicit connection_slot(std::shared_ptr<server_core> core) : core_(std::move(core)) {
    core_->connections.fetch_add(1);
    std::lock_guard<std::mutex> lk(core_->mtx);
    id_ = core_->next_id++;
  }
  connection_slot(connection_slot&& o) noexcept
    : core_(std::move(o.core_)), id_(std::exchange(o.id_, 0)) {}
  connection_slot& operator=(connection_slot&& o) noexcept {
    if (this != &o) {
      release();
      core_ = std::move(o.core_);
      id_ = std::exchange(o.id_, 0);
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
    core_->open[id_] = std::move(c);
  }

 private:
  void release() {
    if (!core_ || id_ == 0)
      return;
    {
      std::lock_guard<std::mutex> lk(core_->mtx);
      core_->open.erase(id_);
    }
    core_->connections.fetch_sub(1);
    id_ = 0;
    core_.reset();
  }

  std::shared_ptr<server_core> core_;
  std::uint64_t id_ = 0;
};

} // namespace sreh::net
