#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "core/base/expected.hpp"
#include "core/base/sse.hpp"

namespace sreh::net {

struct http_response {
  int status = 0;
  std::string content_type;
  std::string body;
  std::map<std::string, std::string> headers; // lower-case names
};

/// HTTPS for a request: the server's certificate is verified against `ca_file` (else the
/// system's CAs) and the host name; with `cert_file` and `key_file`, a client certificate for
/// a server that asks for one (mutual TLS).
struct client_tls {
  std::string ca_file;
  std::string cert_file;
  std::string key_file;
};

/// What a request's error says when the server accepted the connection and closed it before
/// any byte of an answer: what a server that speaks only HTTPS does to plain HTTP (callers may
/// add that hint).
inline constexpr std::string_view closed_without_answer = "closed the connection without answering";

/// A synchronous HTTP/1.1 client for the CLI and tools (one request per connection), over TLS
/// when `tls` is given. Errors name the host, port and what failed (connect refused, timeout,
/// a certificate that does not verify, bad response).
[[nodiscard]] expected<http_response> http_request(
  const std::string& host, std::uint16_t port, const std::string& method, const std::string& target,
  const std::string& body = {}, const std::map<std::string, std::string>& headers = {},
  std::chrono::milliseconds timeout = std::chrono::seconds(30), const client_tls* tls = nullptr);

/// One server-sent event (core/base/sse.hpp).
using sse_event = sreh::sse_event;

/// Reads an SSE stream until `on_event` returns false, the server closes, or an error.
/// Sends `Last-Event-ID` when `last_event_id` is not empty. Comment lines (heartbeats) are skipped.
[[nodiscard]] sreh::error sse_stream(const std::string& host, std::uint16_t port,
                                     const std::string& target, const std::string& last_event_id,
                                     const std::function<bool(const sse_event&)>& on_event,
                                     const std::map<std::string, std::string>& headers = {},
                                     const client_tls* tls = nullptr);

} // namespace sreh::net
