#pragma once
// A connection stream that is plain TCP or TLS over TCP: the front's when the node serves HTTPS
// (`tls:` in the config; net/http/tls.hpp), the client's for an https:// server. One type for
// both, so the HTTP and SSE sessions and the client are written once: it forwards the stream
// operations Beast's HTTP reads and writes use to the one it holds, and gives the TCP layer for
// connecting, timeouts and shutdown.

#include <boost/asio/ssl/context.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include <memory>
#include <variant>

#include "net/http/beast.hpp"

namespace sreh::net {

class maybe_tls_stream {
 public:
  using tls_stream = beast::ssl_stream<beast::tcp_stream>;
  using executor_type = beast::tcp_stream::executor_type;

  explicit maybe_tls_stream(tcp::socket&& s)
    : s_(std::in_place_type<beast::tcp_stream>, std::move(s)) {}
  /// A TLS stream over `s` with `ctx` (kept alive as long as the stream: a reload replaces the
  /// node's context, never one a connection uses). `s` may be unconnected yet (a client's).
  maybe_tls_stream(tcp::socket&& s, std::shared_ptr<asio::ssl::context> ctx)
    : ctx_(std::move(ctx)),
      s_(std::in_place_type<tls_stream>, beast::tcp_stream{std::move(s)}, *ctx_) {}

  [[nodiscard]] bool tls() const { return std::holds_alternative<tls_stream>(s_); }
  [[nodiscard]] tls_stream& tls_layer() { return std::get<tls_stream>(s_); }
  [[nodiscard]] beast::tcp_stream& tcp_layer() {
    return std::visit([](auto& s) -> beast::tcp_stream& { return beast::get_lowest_layer(s); }, s_);
  }
  executor_type get_executor() { return tcp_layer().get_executor(); }

  // The TCP layer's timeouts and shutdown, for the sessions.
  void expires_after(std::chrono::steady_clock::duration d) { tcp_layer().expires_after(d); }
  void expires_never() { tcp_layer().expires_never(); }
  tcp::socket& socket() { return tcp_layer().socket(); }
  void close() { tcp_layer().close(); }

  template <class MutableBufferSequence, class ReadHandler>
  void async_read_some(const MutableBufferSequence& buffers, ReadHandler&& handler) {
    std::visit([&](auto& s) { s.async_read_some(buffers, std::forward<ReadHandler>(handler)); },
               s_);
  }
  template <class ConstBufferSequence, class WriteHandler>
  void async_write_some(const ConstBufferSequence& buffers, WriteHandler&& handler) {
    std::visit([&](auto& s) { s.async_write_some(buffers, std::forward<WriteHandler>(handler)); },
               s_);
  }

 private:
  std::shared_ptr<asio::ssl::context> ctx_; // before s_: outlives the TLS stream
  std::variant<beast::tcp_stream, tls_stream> s_;
};

} // namespace sreh::net
