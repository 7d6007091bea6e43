#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "actors/runtime/supervision.hpp"
#include "net/http/http_server.hpp"

namespace sreh::net {

/// The HTTP front as a service the node supervises (child "http_front"): each start makes a
/// fresh http_server on the address of the first start — on the port that one picked when it was
/// given port 0 — so a restarted front answers where the old one did. An exception that escapes
/// the server's io loop is its failure: the supervisor stops the server (its connections close;
/// clients reconnect, SSE ones with Last-Event-ID) and starts a new one after the backoff.
///
/// Requests reach the kernel as messages through `ctx.kernel` (kernel_api). Concurrency: start
/// and stop as actors::service says; `port` is thread-safe.
class http_front final : public actors::service {
 public:
  http_front(server_context ctx, std::string host, std::uint16_t port)
    : ctx_(ctx), host_(std::move(host)), port_(port) {}
  ~http_front() override { stop(); }

  [[nodiscard]] std::string name() const override { return "http_front"; }
  [[nodiscard]] sreh::error start(actors::failure_handler failed) override;
  void stop() override;
  /// The port it listens on (the one it picked, after a start with port 0).
  [[nodiscard]] std::uint16_t port() const { return port_.load(); }

 private:
  server_context ctx_;
  std::string host_;
  std::atomic<std::uint16_t> port_;
  std::unique_ptr<http_server> server_;
};

} // namespace sreh::net
