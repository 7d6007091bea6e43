#pragma once

#include <array>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <variant>

#include "net/http/http_message.hpp"
#include "net/http/maybe_tls_stream.hpp"
#include "net/http/server_core.hpp"

namespace sreh::net {

/// One HTTP/1.1 connection: keep-alive loop read → route → write → read, enforcing the header,
/// body and time limits. Hands its socket to an sse_session for SSE routes.
///
/// Concurrency: every member function runs on the connection's strand except `shutdown` and the
/// responder callbacks, which post onto it.
class http_session : public connection, public std::enable_shared_from_this<http_session> {
 public:
  http_session(std::shared_ptr<server_core> core, maybe_tls_stream&& stream, connection_slot slot);

  /// Starts the read loop (after the TLS handshake, on an HTTPS front).
  void start();
  /// Before start: the connection may ask only /healthz and /readyz (one request, then it
  /// closes); anything else gets 503 with `why`.
  void limit_to_health(std::string why);
  void shutdown() override;

 private:
  /// HTTPS: the server side of the handshake, within limits.header_timeout_ms.
  void handshake();
  void do_read();
  /// Reads a request header, the whole of which must arrive within limits.header_timeout_ms.
  void read_header();
  void on_header(beast::error_code ec);
  /// Reads the rest of the body (answering `Expect: 100-continue` first), then dispatches.
  void read_body();
  void on_body(beast::error_code ec);
  void dispatch_request();
  /// On the strand, with what the SSE route's handler said: its problem, or the stream.
  void start_stream(std::variant<reply, sse_spec> out);
  [[nodiscard]] responder make_responder();
  /// Checks the caller against what the route needs; the 401/403 reply when refused.
  [[nodiscard]] std::optional<reply> authorize(access need);
  void fail_early(int status, std::string_view slug, std::string detail);
  void write_reply(reply r, bool close_after);
  void on_written(bool close, bool linger, beast::error_code ec);
  void linger();
  void linger_read();
  void close();
  void log_request(int status) const;

  std::shared_ptr<server_core> core_;
  maybe_tls_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::shared_ptr<http::response<http::string_body>> res_;
  connection_slot slot_;

  // The request in flight (one at a time: no pipelining in parallel).
  request req_;
  unsigned version_ = 11;
  bool keep_alive_ = true;
  bool in_flight_ = false;
  bool head_ = false; // the request in hand is a HEAD: answer without the body
  std::chrono::steady_clock::time_point started_;
  std::size_t lingered_ = 0;
  bool first_request_ = true;
  std::string route_ = "none"; // the matched route's pattern, for the request metrics
  std::string health_only_;    // set: why only /healthz and /readyz are served
  std::array<char, 8192> scratch_{};
};

} // namespace sreh::net
