// The model gateway's asynchronous HTTP/1.1 client: one io_context thread, one `call` object per
// request driving resolve → connect → TLS handshake → write → read header → read body, each
// operation with its timeout; keep-alive connections go back to a pool per server.
#include "net/client/model_http.hpp"

#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <openssl/ssl.h>

#include <deque>
#include <map>
#include <optional>
#include <thread>

#include "core/base/expected.hpp"
#include "core/base/http_url.hpp"
#include "core/base/text.hpp"
#include "net/http/beast.hpp"
#include "net/http/maybe_tls_stream.hpp"

namespace sreh::net {

namespace {

namespace ssl = asio::ssl;
using clock_type = std::chrono::steady_clock;
using ms = std::chrono::milliseconds;

using url_parts = sreh::client_url;

using conn_ptr = std::unique_ptr<maybe_tls_stream>;

struct idle_conn {
  conn_ptr conn;
  clock_type::time_point since;
};

/// What every call shares; used only on the io thread (but for the io_context itself).
struct shared_core {
  explicit shared_core(model_http_options o) : opt(o) {}
  model_http_options opt;
  asio::io_context ioc; // before the pool: idle sockets close before the context goes
  std::map<std::string, std::deque<idle_conn>> idle;
  std::map<std::string, std::shared_ptr<ssl::context>> contexts; // by CA file

  conn_ptr take_idle(const std::string& key) {
    auto i = idle.find(key);
    if (i == idle.end())
      return nullptr;
    auto now = clock_type::now();
    while (!i->second.empty()) {
      auto c = std::move(i->second.back());
      i->second.pop_back();
      if (now - c.since < opt.idle_keep)
        return std::move(c.conn);
    }
    return nullptr;
  }
  void give_back(const std::string& key, conn_ptr c) {
    auto& q = idle[key];
    q.push_back({std::move(c), clock_type::now()});
    while (q.size() > opt.max_idle_per_server)
      q.pop_front();
  }
  expected<std::shared_ptr<ssl::context>> context_for(const std::string& ca_file) {
    if (auto i = contexts.find(ca_file); i != contexts.end())
      return i->second;
    auto ctx = std::make_shared<ssl::context>(ssl::context::tls_client);
    beast::error_code ec;
    ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                       ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1,
                     ec);
    if (ca_file.empty())
      ctx->set_default_verify_paths(ec);
    else
      ctx->load_verify_file(ca_file, ec);
    if (ec)
      return sreh::error{errc::invalid_argument, "CA file '" + ca_file + "': " + ec.message()};
    ctx->set_verify_mode(ssl::verify_peer, ec);
    contexts.emplace(ca_file, ctx);
    return ctx;
  }
};

class call : public std::enable_shared_from_this<call> {
 public:
  call(shared_core& core, actors::transport_request req, actors::chunk_fn on_chunk,
       actors::done_fn on_done)
    : core_(core), req_(std::move(req)), on_chunk_(std::move(on_chunk)),
      on_done_(std::move(on_done)), resolver_(core.ioc) {}

  void start() {
    deadline_ = clock_type::now() + req_.total_timeout;
    auto u = parse_client_url(req_.url);
    if (!u)
      return fail_with(errc::invalid_argument, u.error().message);
    url_ = std::move(*u);
    where_ = url_.host + ":" + std::to_string(url_.port);
    key_ = fmt_key();
    make_request();
    if ((conn_ = core_.take_idle(key_))) {
      reused_ = true;
      return write();
    }
    resolve();
  }

 private:
  std::string fmt_key() const {
    return (url_.tls ? "https|" : "http|") + url_.host + "|" + std::to_string(url_.port) + "|" +
           req_.ca_file;
  }

  void make_request() {
    hreq_.method(http::verb::post);
    hreq_.target(url_.target);
    hreq_.version(11);
    bool default_port = url_.port == (url_.tls ? 443 : 80);
    hreq_.set(http::field::host,
              default_port ? url_.host : url_.host + ":" + std::to_string(url_.port));
    hreq_.set(http::field::user_agent, "sreh");
    hreq_.set(http::field::content_type, "application/json");
    for (const auto& [k, v] : req_.headers)
      hreq_.set(k, v);
    hreq_.body() = std::move(req_.body); // kept there for a retry on a fresh connection
    hreq_.keep_alive(true);
    hreq_.prepare_payload();
  }

  /// The timeout of the next operation: `step`, cut to what is left of the total. Sets
  /// `total_hit_` when the total is the shorter.
  clock_type::duration limit(ms step) {
    auto left = deadline_ - clock_type::now();
    if (left <= clock_type::duration::zero())
      left = clock_type::duration{1};
    total_hit_ = left < step;
    return total_hit_ ? left : clock_type::duration{step};
  }

  void resolve() {
    auto self = shared_from_this();
    resolver_.async_resolve(url_.host, std::to_string(url_.port),
                            [self](beast::error_code ec, tcp::resolver::results_type results) {
                              if (ec)
                                return self->fail_with(errc::unavailable,
                                                       self->where_ +
                                                         ": cannot resolve host: " + ec.message());
                              self->connect(std::move(results));
                            });
  }

  void connect(tcp::resolver::results_type results) {
    if (url_.tls) {
      auto ctx = core_.context_for(req_.ca_file);
      if (!ctx)
        return fail_with(ctx.error().code, ctx.error().message);
      conn_ = std::make_unique<maybe_tls_stream>(tcp::socket{core_.ioc}, *ctx);
      beast::error_code ec;
      if (asio::ip::make_address(url_.host, ec); ec) // SNI, never for an IP address
        SSL_set_tlsext_host_name(conn_->tls_layer().native_handle(), url_.host.c_str());
      conn_->tls_layer().set_verify_callback(ssl::host_name_verification(url_.host));
    } else {
      conn_ = std::make_unique<maybe_tls_stream>(tcp::socket{core_.ioc});
    }
    conn_->expires_after(limit(req_.connect_timeout));
    auto self = shared_from_this();
    conn_->tcp_layer().async_connect(results, [self](beast::error_code ec, const tcp::endpoint&) {
      if (ec)
        return self->fail(ec, "connect");
      beast::error_code ignored; // small writes go out at once
      self->conn_->socket().set_option(tcp::no_delay(true), ignored);
      self->handshake();
    });
  }

  void handshake() {
    if (!url_.tls)
      return write();
    conn_->expires_after(limit(req_.connect_timeout));
    auto self = shared_from_this();
    conn_->tls_layer().async_handshake(ssl::stream_base::client, [self](beast::error_code ec) {
      if (ec)
        return self->fail(ec, "TLS handshake");
      self->write();
    });
  }

  void write() {
    conn_->expires_after(limit(req_.read_timeout));
    auto self = shared_from_this();
    http::async_write(*conn_, hreq_, [self](beast::error_code ec, std::size_t) {
      if (ec)
        return self->fail(ec, "sending the request");
      self->read_header();
    });
  }

  void read_header() {
    parser_.emplace();
    parser_->body_limit(core_.opt.max_body_bytes);
    conn_->expires_after(limit(req_.read_timeout));
    auto self = shared_from_this();
    http::async_read_header(*conn_, buf_, *parser_, [self](beast::error_code ec, std::size_t) {
      if (ec)
        return self->fail(ec, "reading the response");
      self->got_bytes_ = true;
      auto& res = self->parser_->get();
      self->reply_.status = static_cast<int>(res.result_int());
      for (const auto& f : res)
        self->reply_.headers.emplace_back(ascii_lower(to_sv(f.name_string())),
                                          std::string(to_sv(f.value())));
      self->streaming_ = self->on_chunk_ && self->reply_.status >= 200 && self->reply_.status < 300;
      self->reply_.streamed = self->streaming_;
      self->read_body();
    });
  }

  void read_body() {
    if (parser_->is_done())
      return complete();
    if (chunk_.empty()) // only now: a call waiting for its answer holds no body buffer
      chunk_.resize(chunk_size);
    parser_->get().body().data = chunk_.data();
    parser_->get().body().size = chunk_.size();
    conn_->expires_after(limit(req_.read_timeout));
    auto self = shared_from_this();
    http::async_read_some(*conn_, buf_, *parser_, [self](beast::error_code ec, std::size_t) {
      if (ec == http::error::need_buffer)
        ec = {};
      auto n = self->chunk_.size() - self->parser_->get().body().size;
      if (n > 0 && !self->deliver(std::string_view{self->chunk_.data(), n}))
        return self->stop_reading();
      if (ec)
        return self->fail(ec, "reading the response body");
      self->read_body();
    });
  }

  /// Hands `bytes` on; false when the caller wants no more.
  bool deliver(std::string_view bytes) {
    if (streaming_)
      return on_chunk_(bytes);
    reply_.body.append(bytes);
    return true;
  }

  void stop_reading() {
    conn_.reset(); // the rest of the body is unread: the connection cannot be reused
    finish();
  }

  void complete() {
    if (parser_->keep_alive())
      core_.give_back(key_, std::move(conn_));
    finish();
  }

  void fail(beast::error_code ec, const char* what) {
    bool stale = ec == http::error::end_of_stream || ec == asio::error::eof ||
                 ec == asio::error::connection_reset || ec == asio::error::broken_pipe;
    if (reused_ && !got_bytes_ && stale) {
      // A pooled connection the server had closed meanwhile: once more on a fresh one.
      reused_ = false;
      conn_.reset();
      buf_.clear();
      return resolve();
    }
    conn_.reset();
    if (ec == beast::error::timeout)
      return fail_with(errc::deadline, where_ + ": " + what + ": timed out (" +
                                         (total_hit_ ? "total_timeout" : timeout_name(what)) + ")");
    fail_with(errc::unavailable, where_ + ": " + what + ": " + ec.message());
  }

  static const char* timeout_name(std::string_view what) {
    return what == "connect" || what == "TLS handshake" ? "connect_timeout" : "read_timeout";
  }

  void fail_with(errc code, std::string message) {
    reply_.error = sreh::error{code, std::move(message)};
    finish();
  }

  void finish() {
    if (done_)
      return;
    done_ = true;
    auto done = std::move(on_done_);
    done(std::move(reply_));
  }

  shared_core& core_;
  actors::transport_request req_;
  actors::chunk_fn on_chunk_;
  actors::done_fn on_done_;
  tcp::resolver resolver_;
  url_parts url_;
  std::string where_;
  std::string key_;
  conn_ptr conn_;
  bool reused_ = false;
  bool got_bytes_ = false;
  bool streaming_ = false;
  bool total_hit_ = false;
  bool done_ = false;
  clock_type::time_point deadline_;
  http::request<http::string_body> hreq_;
  beast::flat_buffer buf_;
  std::optional<http::response_parser<http::buffer_body>> parser_;
  static constexpr std::size_t chunk_size = 16 * 1024;
  std::string chunk_;
  actors::transport_reply reply_;
};

class model_http final : public actors::model_transport {
 public:
  explicit model_http(model_http_options opt)
    : core_(std::make_unique<shared_core>(opt)), work_(asio::make_work_guard(core_->ioc)),
      thread_([this] { core_->ioc.run(); }) {}

  ~model_http() override {
    work_.reset();
    core_->ioc.stop();
    thread_.join();
  }

  void post(actors::transport_request req, actors::chunk_fn on_chunk,
            actors::done_fn on_done) override {
    auto c =
      std::make_shared<call>(*core_, std::move(req), std::move(on_chunk), std::move(on_done));
    asio::post(core_->ioc, [c] { c->start(); });
  }

  void after(std::chrono::milliseconds delay, std::function<void()> fn) override {
    asio::post(core_->ioc, [this, delay, fn = std::move(fn)]() mutable {
      auto t = std::make_shared<asio::steady_timer>(core_->ioc, delay);
      t->async_wait([t, fn = std::move(fn)](beast::error_code ec) {
        if (!ec)
          fn();
      });
    });
  }

 private:
  std::unique_ptr<shared_core> core_;
  asio::executor_work_guard<asio::io_context::executor_type> work_;
  std::thread thread_;
};

} // namespace

actors::model_transport_ptr make_model_http(model_http_options opt) {
  return std::make_shared<model_http>(opt);
}

} // namespace sreh::net
