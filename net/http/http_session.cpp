#include "net/http/http_session.hpp"

#include <cctype>
#include <stdexcept>

#include "core/base/fault.hpp"
#include "core/base/text.hpp"
#include "net/http/problem.hpp"
#include "net/http/sse_session.hpp"
#include "net/http/url.hpp"

namespace sreh::net {

namespace {

constexpr auto linger_timeout = std::chrono::seconds(2);
constexpr std::size_t linger_max_bytes = 8u << 20;

bool is_json_media_type(const std::string* ct) {
  if (!ct)
    return false;
  auto v = ascii_lower(*ct);
  constexpr std::string_view json = "application/json";
  if (v.compare(0, json.size(), json) != 0)
    return false;
  return v.size() == json.size() || v[json.size()] == ';' || v[json.size()] == ' ';
}

std::chrono::milliseconds ms(std::int64_t n) {
  return std::chrono::milliseconds{n};
}

bool is_health_path(std::string_view path) {
  return path == "/healthz" || path == "/readyz";
}

bool is_quiet_close(const beast::error_code& ec) {
  return ec == http::error::end_of_stream || ec == asio::error::eof ||
         ec == asio::error::connection_reset || ec == asio::error::operation_aborted ||
         ec == beast::error::timeout || ec == asio::error::bad_descriptor;
}

} // namespace

http_session::http_session(std::shared_ptr<server_core> core, maybe_tls_stream&& stream,
                           connection_slot slot)
  : core_(std::move(core)), stream_(std::move(stream)), slot_(std::move(slot)) {
  waiting_since.store(steady_now_ns()); // from the accept: sheddable before its first read
}

void http_session::start() {
  slot_.bind(weak_from_this());
  asio::dispatch(stream_.get_executor(), [self = shared_from_this()] {
    if (self->stream_.tls())
      return self->handshake();
    self->do_read();
  });
}

void http_session::handshake() {
  stream_.expires_after(ms(core_->ctx.cfg.limits.header_timeout_ms));
  stream_.tls_layer().async_handshake(
    asio::ssl::stream_base::server, buffer_.data(),
    [self = shared_from_this()](beast::error_code ec, std::size_t used) {
      if (ec) {
        // A client without a valid certificate (mutual TLS), plain HTTP on the TLS port, a
        // protocol or cipher it cannot agree on.
        if (!is_quiet_close(ec))
          self->core_->log->info("TLS handshake refused: {}", ec.message());
        self->core_->tls_refused.fetch_add(1);
        return self->close();
      }
      self->buffer_.consume(used);
      self->do_read();
    });
}

void http_session::limit_to_health(std::string why) {
  health_only_ = std::move(why);
  core_->limited.fetch_add(1);
}

void http_session::shutdown() {
  asio::post(stream_.get_executor(), [self = shared_from_this()] { self->close(); });
}

void http_session::do_read() {
  if (core_->stopping)
    return close();
  const auto& limits = core_->ctx.cfg.limits;
  parser_.emplace();
  parser_->header_limit(static_cast<std::uint32_t>(limits.max_header_bytes));
  parser_->body_limit(static_cast<std::uint64_t>(limits.max_body_bytes));
  // Waiting for a header from now (a fresh connection: since its accept), unless chosen to be
  // shed meanwhile.
  std::int64_t busy = 0;
  if (!waiting_since.compare_exchange_strong(busy, steady_now_ns()) && busy == -1)
    return close();
  // A fresh connection, or a pipelined request already begun: its header is due now.
  if (std::exchange(first_request_, false) || buffer_.size() > 0)
    return read_header();
  // Between requests on a keep-alive connection: the next request's first byte may take the
  // idle timeout; the rest of its header is due within the header timeout from then.
  stream_.expires_after(ms(limits.idle_timeout_ms));
  stream_.async_read_some(
    buffer_.prepare(4096), [self = shared_from_this()](beast::error_code ec, std::size_t n) {
      if (ec)
        return self->close();
      self->buffer_.commit(n);
      // A request begins: its header is due from now, and it is no longer the oldest idle one.
      auto idle_since = self->waiting_since.load();
      if (idle_since == -1 ||
          !self->waiting_since.compare_exchange_strong(idle_since, steady_now_ns()))
        return self->close(); // shed meanwhile
      self->read_header();
    });
}

void http_session::read_header() {
  stream_.expires_after(ms(core_->ctx.cfg.limits.header_timeout_ms));
  http::async_read_header(
    stream_, buffer_, *parser_,
    [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_header(ec); });
}

void http_session::on_header(beast::error_code ec) {
  started_ = std::chrono::steady_clock::now();
  req_ = request{};
  route_ = "none";
  if (waiting_since.exchange(0) == -1)
    return close(); // chosen to be shed for a newcomer
  if (ec == beast::error::timeout) {
    core_->header_timeouts.fetch_add(1);
    core_->log->debug("a request header did not arrive within {} ms: connection closed",
                      core_->ctx.cfg.limits.header_timeout_ms);
  }
  if (ec && is_quiet_close(ec))
    return close();
  if (fault("http.io"))
    throw std::runtime_error("fault injected at http.io");
  req_.request_id = core_->ctx.ids.next("req");
  if (ec == http::error::header_limit)
    return fail_early(431, "header-too-large",
                      "request header exceeds " +
                        std::to_string(core_->ctx.cfg.limits.max_header_bytes) + " bytes");
  if (ec == http::error::body_limit) {
    // Beast checks Content-Length against the limit while parsing the header.
    if (auto target = parse_target(to_sv(parser_->get().target())))
      req_.path = std::move(target->path);
    req_.method = std::string(parser_->get().method_string());
    return fail_early(413, "too-large",
                      "request body exceeds the limit of " +
                        std::to_string(core_->ctx.cfg.limits.max_body_bytes) + " bytes");
  }
  if (ec)
    return fail_early(400, "malformed-request", "malformed HTTP request: " + ec.message());

  const auto& h = parser_->get();
  version_ = h.version();
  keep_alive_ = h.keep_alive();
  req_.method = std::string(h.method_string());
  req_.target = std::string(h.target());
  for (const auto& f : h) {
    auto name = ascii_lower(to_sv(f.name_string()));
    auto value = to_sv(f.value());
    auto [it, fresh] = req_.headers.try_emplace(name, value);
    if (!fresh)
      (it->second += ", ").append(value);
  }
  auto target = parse_target(req_.target);
  if (!target) {
    req_.path = req_.target;
    return fail_early(400, "malformed-request",
                      "request target '" + req_.target + "' is malformed");
  }
  req_.path = std::move(target->path);
  req_.query = std::move(target->query);
  if (!health_only_.empty() && !is_health_path(req_.path))
    return fail_early(503, "unavailable", health_only_ + "; retry shortly"); // before any body

  auto limit = static_cast<std::uint64_t>(core_->ctx.cfg.limits.max_body_bytes);
  if (auto len = parser_->content_length(); len && *len > limit)
    return fail_early(413, "too-large",
                      "request body of " + std::to_string(*len) + " bytes exceeds the limit of " +
                        std::to_string(limit) + " bytes");
  if (parser_->is_done())
    return dispatch_request();

  read_body();
}

void http_session::read_body() {
  // An incomplete body is an incomplete request: sheddable like a header under way.
  waiting_since.store(steady_now_ns());
  stream_.expires_after(ms(core_->ctx.cfg.limits.idle_timeout_ms));
  auto read = [self = shared_from_this()] {
    http::async_read(self->stream_, self->buffer_, *self->parser_,
                     [self](beast::error_code e, std::size_t) { self->on_body(e); });
  };
  const auto* expect = req_.header("expect");
  if (expect && ascii_lower(*expect) == "100-continue") {
    auto cont =
      std::make_shared<http::response<http::empty_body>>(http::status::continue_, version_);
    auto on_sent = [self = shared_from_this(), cont, read](beast::error_code e, std::size_t) {
      if (e)
        return self->close();
      read();
    };
    http::async_write(stream_, *cont, std::move(on_sent));
    return;
  }
  read();
}

void http_session::on_body(beast::error_code ec) {
  if (waiting_since.exchange(0) == -1)
    return close(); // chosen to be shed for a newcomer
  if (ec == http::error::body_limit)
    return fail_early(413, "too-large",
                      "request body exceeds the limit of " +
                        std::to_string(core_->ctx.cfg.limits.max_body_bytes) + " bytes");
  if (ec)
    return close();
  req_.body = std::move(parser_->get().body());
  dispatch_request();
}

void http_session::dispatch_request() {
  stream_.expires_never();
  in_flight_ = true;
  // HEAD is GET without the body (load balancers and monitors probe /healthz with it).
  head_ = req_.method == "HEAD";
  if (!health_only_.empty())
    keep_alive_ = false; // one request, then the place goes back
  auto m =
    core_->routes.find(head_ ? std::string_view{"GET"} : std::string_view{req_.method}, req_.path);
  if (head_ && m.found && m.found->sse)
    m = core_->routes.find(req_.method, req_.path); // a stream has no HEAD: 405 with Allow
  route_ = m.found ? m.found->pattern : "unmatched";
  if (!m.found && m.status == 405) {
    auto r = problem(405, "method-not-allowed",
                     "method " + req_.method + " is not allowed on " + req_.path +
                       " (allowed: " + m.allow + ")",
                     req_);
    r.headers.emplace_back("Allow", m.allow);
    return write_reply(std::move(r), false);
  }
  if (!m.found && !core_->ctx.api && req_.path.rfind("/v1/", 0) == 0)
    return write_reply(
      problem(503, "unavailable",
              "node '" + core_->ctx.cfg.node_id +
                "' does not serve the API (its cluster roles lack 'api'); send "
                "requests to a node that has it (GET /v1/cluster/nodes lists them)",
              req_),
      false);
  if (!m.found)
    return write_reply(
      problem(404, "not-found", "no route for " + req_.method + " " + req_.path, req_), false);
  req_.params = std::move(m.params);
  if (auto denied = authorize(m.found->need))
    return write_reply(std::move(*denied), false);
  if (req_.method == "POST" && !req_.body.empty() &&
      !is_json_media_type(req_.header("content-type")))
    return write_reply(
      problem(415, "unsupported-media-type", "Content-Type must be application/json", req_), false);
  try {
    if (m.found->sse) {
      // The handler may read the store (does the run exist?): on the handler pool; the stream
      // starts back on the strand.
      asio::post(core_->handlers, [self = shared_from_this(), h = &m.found->sse, req = req_] {
        if (self->core_->stopping)
          return;
        std::variant<reply, sse_spec> out;
        try {
          out = (*h)(req);
        } catch (const std::exception& e) {
          self->core_->log->error("{} {} {}: handler threw: {}", req.request_id, req.method,
                                  req.path, e.what());
          out = problem(500, "internal", "internal error (see the server log)", req);
        }
        asio::post(self->stream_.get_executor(),
                   [self, out = std::move(out)]() mutable { self->start_stream(std::move(out)); });
      });
      return;
    }
    auto r = make_responder();
    if (m.found->on_io_thread)
      return m.found->plain(req_, std::move(r));
    // Off the HTTP threads (server_core::handlers), with a copy of the request: the handler may
    // block on the store, and the session reads the next request into req_ after the reply.
    r.post([h = &m.found->plain, req = req_, r]() { (*h)(req, r); });
  } catch (const std::exception& e) {
    core_->log->error("{} {} {}: handler threw: {}", req_.request_id, req_.method, req_.path,
                      e.what());
    if (in_flight_)
      write_reply(problem(500, "internal", "internal error (see the server log)", req_), false);
  }
}

void http_session::start_stream(std::variant<reply, sse_spec> out) {
  if (auto* r = std::get_if<reply>(&out))
    return write_reply(std::move(*r), false);
  log_request(200);
  in_flight_ = false;
  auto sse = std::make_shared<sse_session>(core_, std::move(stream_), std::move(buffer_),
                                           std::get<sse_spec>(std::move(out)), std::move(slot_),
                                           req_.request_id, version_);
  sse->start();
}

std::optional<reply> http_session::authorize(access need) {
  auto what = req_.method + " " + req_.path;
  auto a = authenticate(*core_->tokens, req_.header("authorization"), need, what);
  if (a.status == 200) {
    req_.who = std::move(a.who);
    return std::nullopt;
  }
  auto r = problem(a.status, a.status == 401 ? "unauthorized" : "forbidden", a.detail, req_);
  if (a.status == 401)
    r.headers.emplace_back("WWW-Authenticate", R"(Bearer realm="sreh")");
  core_->log->info("{} {} {}: {} ({})", req_.request_id, req_.method, req_.path, a.status,
                   a.detail);
  return r;
}

responder http_session::make_responder() {
  auto self = shared_from_this();
  responder r;
  r.send = [self](reply rep) {
    asio::post(self->stream_.get_executor(), [self, rep = std::move(rep)]() mutable {
      self->write_reply(std::move(rep), false);
    });
  };
  // The request this responder answers (made on the strand, at dispatch): the 500 below must
  // not go to a later request of the connection if the work answered before it threw.
  r.post = [self, id = req_.request_id](std::function<void()> work) {
    if (self->core_->stopping)
      return;
    asio::post(self->core_->handlers, [self, work = std::move(work), id] {
      if (self->core_->stopping)
        return;
      try {
        work();
      } catch (const std::exception& e) {
        auto what = std::string{e.what()};
        asio::post(self->stream_.get_executor(), [self, what = std::move(what), id] {
          self->core_->log->error("{} {} {}: handler threw: {}", id, self->req_.method,
                                  self->req_.path, what);
          if (self->in_flight_ && self->req_.request_id == id)
            self->write_reply(
              problem(500, "internal", "internal error (see the server log)", self->req_), false);
        });
      }
    });
  };
  return r;
}

void http_session::fail_early(int status, std::string_view slug, std::string detail) {
  write_reply(make_problem(status, slug, reason_phrase(status), detail, req_.path, req_.request_id),
              true);
}

void http_session::write_reply(reply r, bool close_after) {
  if (!in_flight_ && !close_after)
    return; // answered already
  in_flight_ = false;
  auto res = std::make_shared<http::response<http::string_body>>();
  res->result(static_cast<unsigned>(r.status));
  res->version(version_);
  res->set(http::field::server, "sreh");
  res->set(http::field::content_type, r.content_type);
  res->set("X-Request-Id", req_.request_id);
  for (auto& [name, value] : r.headers)
    res->set(name, value);
  res->body() = std::move(r.body);
  bool close = close_after || !keep_alive_ || core_->stopping;
  res->keep_alive(!close);
  res->prepare_payload();
  if (head_) { // the headers of the GET, Content-Length included, and no body
    const auto length = res->body().size();
    res->body().clear();
    res->content_length(length);
  }
  log_request(r.status);
  stream_.expires_after(ms(core_->ctx.cfg.limits.idle_timeout_ms));
  http::async_write(
    stream_, *res,
    [self = shared_from_this(), res, close, close_after](beast::error_code ec, std::size_t) {
      self->on_written(close, close_after, ec);
    });
}

void http_session::on_written(bool close_conn, bool linger_first, beast::error_code ec) {
  if (ec)
    return close();
  if (!close_conn)
    return do_read();
  if (linger_first)
    return linger();
  beast::error_code ignored;
  stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
  close();
}

// After an error answered before the request was read (413, 431, 503), the client may still be
// sending: closing with unread data would reset the connection and lose our answer. Half-close,
// then discard what arrives for a short while.
void http_session::linger() {
  beast::error_code ignored;
  stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
  stream_.expires_after(linger_timeout);
  linger_read();
}

void http_session::linger_read() {
  stream_.async_read_some(asio::buffer(scratch_),
                          [self = shared_from_this()](beast::error_code ec, std::size_t n) {
                            self->lingered_ += n;
                            if (ec || self->lingered_ > linger_max_bytes)
                              return self->close();
                            self->linger_read();
                          });
}

void http_session::close() {
  beast::error_code ignored;
  stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
  stream_.close();
}

void http_session::log_request(int status) const {
  auto us = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() -
                                                                  started_)
              .count();
  if (core_->requests != nullptr) {
    // Bounded labels: a route pattern, and a method the router knows (a client's "FOO" is
    // "other").
    static constexpr std::string_view known[] = {"GET", "HEAD", "POST", "PUT", "DELETE", "PATCH"};
    std::string_view method = "other";
    for (auto k : known)
      if (req_.method == k)
        method = k;
    core_->requests->with({std::string{method}, route_, std::to_string(status)}).inc();
    core_->request_seconds->with({route_}).observe(static_cast<double>(us) / 1e6);
  }
  if (status >= 500)
    core_->log->warn("{} {} {} {} {}us", req_.request_id, req_.method, req_.path, status, us);
  else
    core_->log->debug("{} {} {} {} {}us", req_.request_id, req_.method, req_.path, status, us);
}

} // namespace sreh::net
