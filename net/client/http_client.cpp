// The synchronous HTTP/1.1 client: async Beast operations driven to completion one at a time on
// a private io_context, so that every step has a timeout (synchronous Beast calls have none).
#include "net/client/http_client.hpp"

#include <boost/asio/ssl/host_name_verification.hpp>
#include <openssl/ssl.h>

#include <cctype>
#include <utility>

#include "core/base/json.hpp"
#include "core/base/text.hpp"
#include "net/client/tls_context.hpp"
#include "net/http/beast.hpp"
#include "net/http/maybe_tls_stream.hpp"

namespace sreh::net {

namespace {

constexpr auto connect_timeout = std::chrono::seconds(10);
/// An SSE stream silent for this long is dead (the server sends heartbeats while idle).
constexpr auto sse_idle_timeout = std::chrono::seconds(90);

/// Starts `op` (which takes a completion handler `void(error_code)`) and runs the io_context
/// until it completes.
template <class Op>
beast::error_code run_op(asio::io_context& ioc, Op&& op) {
  beast::error_code result = asio::error::would_block;
  op([&result](beast::error_code ec) { result = ec; });
  ioc.restart();
  ioc.run();
  return result;
}

errc code_of(const beast::error_code& ec) {
  return ec == beast::error::timeout ? errc::deadline : errc::unavailable;
}

sreh::error transport_error(const std::string& where, const char* what,
                            const beast::error_code& ec) {
  auto msg = ec == beast::error::timeout ? std::string("timed out") : ec.message();
  return {code_of(ec), where + ": " + what + ": " + msg};
}

/// An answer that did not come: the server closed (or reset) the connection before its first
/// byte, as a TLS-only server does to plain HTTP, or another error reading it.
sreh::error answer_error(const std::string& where, const beast::error_code& ec) {
  if (ec == http::error::end_of_stream || ec == asio::error::eof ||
      ec == asio::error::connection_reset)
    return {errc::unavailable, where + ": " + std::string{closed_without_answer}};
  return transport_error(where, "reading the response", ec);
}

errc errc_of_status(unsigned status) {
  // The problem+json statuses the server sends (net/http/problem.cpp) back to their codes.
  static constexpr std::pair<unsigned, errc> codes[] = {
    {400, errc::invalid_argument}, {405, errc::invalid_argument}, {411, errc::invalid_argument},
    {415, errc::invalid_argument}, {422, errc::invalid_argument}, {431, errc::invalid_argument},
    {401, errc::unauthorized},     {403, errc::forbidden},        {404, errc::not_found},
    {409, errc::conflict},         {413, errc::too_large},        {503, errc::unavailable},
    {429, errc::too_many},         {504, errc::deadline}};
  for (const auto& [s, code] : codes)
    if (s == status)
      return code;
  return errc::internal;
}

/// The `detail` of a problem+json body, else the body itself (shortened).
std::string problem_detail(unsigned status, const std::string& body) {
  if (auto doc = json::parse(body); doc && doc->IsObject()) {
    auto it = doc->FindMember("detail");
    if (it != doc->MemberEnd() && it->value.IsString() && it->value.GetStringLength() > 0)
      return it->value.GetString();
  }
  auto text = body.substr(0, 300);
  return "HTTP " + std::to_string(status) + (text.empty() ? "" : ": " + text);
}

/// A plain stream, or with `tls` a TLS stream whose context verifies the server.
expected<maybe_tls_stream> make_stream(asio::io_context& ioc, const std::string& host,
                                       const client_tls* tls) {
  if (tls == nullptr)
    return maybe_tls_stream{tcp::socket{ioc}};
  auto ctx = client_tls_context(host, *tls);
  if (!ctx)
    return ctx.error();
  maybe_tls_stream s{tcp::socket{ioc}, std::move(*ctx)};
  beast::error_code ec;
  // SNI: the name the server's certificate is chosen by (never an IP address).
  if (asio::ip::make_address(host, ec); ec)
    SSL_set_tlsext_host_name(s.tls_layer().native_handle(), host.c_str());
  return s;
}

/// Connects `stream` (and does the TLS handshake), or the error naming host and port.
sreh::error connect(asio::io_context& ioc, maybe_tls_stream& stream, const std::string& host,
                    std::uint16_t port, std::chrono::milliseconds timeout) {
  auto where = host + ":" + std::to_string(port);
  tcp::resolver resolver(ioc);
  beast::error_code ec;
  auto results = resolver.resolve(host, std::to_string(port), ec);
  if (ec)
    return {errc::unavailable, where + ": cannot resolve host: " + ec.message()};
  stream.expires_after(std::min<std::chrono::milliseconds>(timeout, connect_timeout));
  ec = run_op(ioc, [&](auto done) {
    stream.tcp_layer().async_connect(
      results, [done](beast::error_code e, const tcp::endpoint&) { done(e); });
  });
  if (ec)
    return transport_error(where, "connect", ec);
  if (stream.tls()) {
    ec = run_op(ioc, [&](auto done) {
      stream.tls_layer().async_handshake(asio::ssl::stream_base::client,
                                         [done](beast::error_code e) { done(e); });
    });
    if (ec)
      return transport_error(where, "TLS handshake", ec);
  }
  return {};
}

http::request<http::string_body> make_request(const std::string& host, std::uint16_t port,
                                              const std::string& method, const std::string& target,
                                              const std::string& body,
                                              const std::map<std::string, std::string>& headers) {
  http::request<http::string_body> req;
  auto verb = http::string_to_verb(method);
  if (verb == http::verb::unknown)
    req.method_string(method);
  else
    req.method(verb);
  req.target(target);
  req.version(11);
  req.set(http::field::host, host + ":" + std::to_string(port));
  req.set(http::field::user_agent, "sreh-cli");
  for (const auto& [k, v] : headers)
    req.set(k, v);
  if (!body.empty()) {
    if (req.find(http::field::content_type) == req.end())
      req.set(http::field::content_type, "application/json");
    req.body() = body;
  }
  req.prepare_payload();
  return req;
}

/// Writes `req` on `stream` (its deadline set by the caller).
template <class Request>
beast::error_code send_request(asio::io_context& ioc, maybe_tls_stream& stream, Request& req) {
  return run_op(ioc, [&](auto done) {
    http::async_write(stream, req, [done](beast::error_code e, std::size_t) { done(e); });
  });
}

/// A stream to host:port, connected (and over TLS, handshaken) within `timeout`.
expected<maybe_tls_stream> open_stream(asio::io_context& ioc, const std::string& host,
                                       std::uint16_t port, std::chrono::milliseconds timeout,
                                       const client_tls* tls) {
  auto made = make_stream(ioc, host, tls);
  if (!made)
    return made.error();
  if (auto err = connect(ioc, *made, host, port, timeout))
    return err;
  return made;
}

} // namespace

expected<std::shared_ptr<asio::ssl::context>> client_tls_context(const std::string& host,
                                                                 const client_tls& tls) {
  namespace ssl = asio::ssl;
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_client);
  beast::error_code ec;
  ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                     ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1,
                   ec);
  if (tls.ca_file.empty())
    ctx->set_default_verify_paths(ec);
  else
    ctx->load_verify_file(tls.ca_file, ec);
  if (ec)
    return sreh::error{errc::invalid_argument, "CA file '" + tls.ca_file + "': " + ec.message()};
  ctx->set_verify_mode(ssl::verify_peer, ec);
  ctx->set_verify_callback(ssl::host_name_verification(host), ec);
  if (!tls.cert_file.empty()) {
    if (ctx->use_certificate_chain_file(tls.cert_file, ec); ec)
      return sreh::error{errc::invalid_argument,
                         "client certificate '" + tls.cert_file + "': " + ec.message()};
    if (ctx->use_private_key_file(tls.key_file, ssl::context::pem, ec); ec)
      return sreh::error{errc::invalid_argument,
                         "client key '" + tls.key_file + "': " + ec.message()};
  }
  return ctx;
}

expected<http_response> http_request(const std::string& host, std::uint16_t port,
                                     const std::string& method, const std::string& target,
                                     const std::string& body,
                                     const std::map<std::string, std::string>& headers,
                                     std::chrono::milliseconds timeout, const client_tls* tls) {
  auto where = host + ":" + std::to_string(port);
  try {
    asio::io_context ioc;
    auto made = open_stream(ioc, host, port, timeout, tls);
    if (!made)
      return made.error();
    auto& stream = *made;
    auto req = make_request(host, port, method, target, body, headers);
    req.keep_alive(false);
    stream.expires_after(timeout);
    auto ec = send_request(ioc, stream, req);
    if (ec)
      return transport_error(where, "sending the request", ec);
    beast::flat_buffer buf;
    http::response_parser<http::string_body> parser;
    parser.body_limit(64u << 20);
    parser.skip(method == "HEAD"); // a HEAD answer has a Content-Length and no body
    ec = run_op(ioc, [&](auto done) {
      http::async_read(stream, buf, parser, [done](beast::error_code e, std::size_t) { done(e); });
    });
    if (ec)
      return answer_error(where, ec);
    auto res = parser.release();
    http_response out;
    out.status = static_cast<int>(res.result_int());
    for (const auto& f : res)
      out.headers[ascii_lower(to_sv(f.name_string()))] = std::string(to_sv(f.value()));
    if (auto it = out.headers.find("content-type"); it != out.headers.end())
      out.content_type = it->second;
    out.body = std::move(res.body());
    beast::error_code ignored;
    stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
    return out;
  } catch (const std::exception& e) {
    return sreh::error{errc::internal, where + ": " + e.what()};
  }
}

sreh::error sse_stream(const std::string& host, std::uint16_t port, const std::string& target,
                       const std::string& last_event_id,
                       const std::function<bool(const sse_event&)>& on_event,
                       const std::map<std::string, std::string>& headers, const client_tls* tls) {
  auto where = host + ":" + std::to_string(port);
  try {
    asio::io_context ioc;
    auto made = open_stream(ioc, host, port, connect_timeout, tls);
    if (!made)
      return made.error();
    auto& stream = *made;
    auto hdrs = headers;
    hdrs["Accept"] = "text/event-stream";
    if (!last_event_id.empty())
      hdrs["Last-Event-ID"] = last_event_id;
    auto req = make_request(host, port, "GET", target, {}, hdrs);
    stream.expires_after(connect_timeout);
    auto ec = send_request(ioc, stream, req);
    if (ec)
      return transport_error(where, "sending the request", ec);

    beast::flat_buffer buf;
    http::response_parser<http::string_body> parser;
    parser.body_limit(boost::none);
    sse_parser sse;
    bool stopped = false;
    // Chunked bodies (the SSE stream) go to the SSE parser; others (problems) are stored.
    // The parser keeps a reference to the callback: it must outlive the reads.
    auto on_chunk = [&](std::uint64_t, beast::string_view body, beast::error_code&) {
      if (!stopped && !sse.feed(to_sv(body), on_event))
        stopped = true;
      return body.size();
    };
    parser.on_chunk_body(on_chunk);
    stream.expires_after(sse_idle_timeout);
    ec = run_op(ioc, [&](auto done) {
      http::async_read_header(stream, buf, parser,
                              [done](beast::error_code e, std::size_t) { done(e); });
    });
    if (ec)
      return answer_error(where, ec);
    auto status = parser.get().result_int();
    if (status != 200) {
      parser.body_limit(1u << 20);
      stream.expires_after(connect_timeout);
      ec = run_op(ioc, [&](auto done) {
        http::async_read(stream, buf, parser,
                         [done](beast::error_code e, std::size_t) { done(e); });
      });
      return {errc_of_status(status), problem_detail(status, parser.get().body())};
    }
    while (!stopped && !parser.is_done()) {
      stream.expires_after(sse_idle_timeout);
      ec = run_op(ioc, [&](auto done) {
        http::async_read_some(stream, buf, parser,
                              [done](beast::error_code e, std::size_t) { done(e); });
      });
      if (stopped)
        break;
      if (ec == http::error::end_of_stream || ec == asio::error::eof)
        return {errc::unavailable, where + ": the stream ended before its end"};
      if (ec)
        return transport_error(where, "reading the stream", ec);
    }
    beast::error_code ignored;
    stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
    return {};
  } catch (const std::exception& e) {
    return {errc::internal, where + ": " + e.what()};
  }
}

} // namespace sreh::net
