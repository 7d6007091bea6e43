#include "net/http/http_server.hpp"

#include <thread>
#include <vector>

#include "net/http/http_session.hpp"
#include "net/http/routes/routes.hpp"
#include "net/http/server_core.hpp"

namespace sreh::net {

struct http_server::impl {
  explicit impl(server_context ctx) : core(std::make_shared<server_core>(ctx)) {
    auto* c = core.get();
    if (ctx.metrics != nullptr)
      collector = ctx.metrics->add_collector([w = std::weak_ptr<server_core>(core)] {
        auto c = w.lock(); // a scrape may outlive a front that was restarted
        if (!c)
          return std::vector<metrics::collected>{};
        return std::vector<metrics::collected>{
          {"sreh_http_connections",
           "Open HTTP connections (SSE streams included).",
           metrics::kind::gauge,
           {{{}, static_cast<double>(c->connections.load())}}},
          {"sreh_http_shed_total",
           "Idle or incomplete connections closed for newcomers.",
           metrics::kind::counter,
           {{{}, static_cast<double>(c->shed.load())}}}};
      });
    core->tokens = ctx.tokens ? ctx.tokens : fallback_tokens(ctx.cfg);
    add_health_routes(core->routes, core->ctx, [c] {
      return front_counters{c->connections.load(), c->shed.load(), c->limited.load(),
                            c->header_timeouts.load()};
    });
    add_actor_routes(core->routes, core->ctx);
    if (!ctx.api)
      return; // a cluster member without the api role
    add_run_routes(core->routes, core->ctx);
    add_message_routes(core->routes, core->ctx);
    add_notification_routes(core->routes, core->ctx);
    add_event_routes(core->routes, core->ctx);
    add_approval_routes(core->routes, core->ctx);
    add_tool_routes(core->routes, core->ctx);
    add_template_routes(core->routes, core->ctx);
    add_flow_routes(core->routes, core->ctx);
    add_work_routes(core->routes, core->ctx);
    add_memory_routes(core->routes, core->ctx);
    add_postmortem_routes(core->routes, core->ctx);
    add_candidate_routes(core->routes, core->ctx);
    add_metrics_route(core->routes, core->ctx);
    for (const auto& group : core->ctx.routes)
      group(core->routes, core->ctx);
  }
  ~impl() {
    if (core->ctx.metrics != nullptr)
      core->ctx.metrics->remove_collector(collector);
  }

  /// The tokens when the node gave none: what the config says, without reading or creating
  /// the admin token file.
  static std::shared_ptr<const token_table> fallback_tokens(const config::node_config& cfg) {
    if (cfg.auth.mode == "none")
      return std::make_shared<token_table>(token_table::disabled());
    auto t = std::make_shared<token_table>();
    for (const auto& tok : cfg.auth.tokens) {
      auto role = parse_role(tok.role);
      auto d = parse_digest(tok.sha256);
      if (role && d)
        t->add(tok.name, *role, *d);
    }
    return t;
  }

  void do_accept() {
    acceptor->async_accept(
      asio::make_strand(core->ioc), [this](beast::error_code ec, tcp::socket socket) {
        if (ec == asio::error::operation_aborted || core->stopping)
          return;
        if (ec) {
          // Out of descriptors (EMFILE, ENFILE) or another failure: accepting again at once
          // would spin.
          core->log_overload();
          core->log->warn("accept failed: {}; pausing accepts for 50 ms", ec.message());
          return pause_accepts();
        }
        on_accept(std::move(socket));
        do_accept();
      });
  }

  void pause_accepts() {
    // On the acceptor's strand, like every accept (stop closes the acceptor there).
    accept_pause.emplace(acceptor->get_executor(), std::chrono::milliseconds(50));
    accept_pause->async_wait([this](beast::error_code ec) {
      if (!ec && !core->stopping)
        do_accept();
    });
  }

  // Accept, then shed: a newcomer over the limit is still taken (so /healthz answers), and the
  // connection that has waited longest for a request header goes instead. When every
  // connection is busy, or the newcomer's address holds its share already, it may ask only
  // /healthz and /readyz. Past twice the limit a newcomer is closed at once.
  void on_accept(tcp::socket socket) {
    // Small writes go out at once: an SSE frame held back by Nagle waits for the client's
    // delayed ACK (up to 40 ms on Linux).
    beast::error_code ec;
    socket.set_option(tcp::no_delay(true), ec);
    auto ep = socket.remote_endpoint(ec);
    auto client = ec ? std::string{"?"} : ep.address().to_string();
    const auto& lim = core->ctx.cfg.limits;
    if (core->connections.load() >= 2 * lim.max_connections) {
      socket.close(ec);
      core->log_overload();
      return;
    }
    connection_slot slot(core, client);
    const bool client_full = lim.max_connections_per_client > 0 &&
                             slot.client_connections() > lim.max_connections_per_client;
    auto stream = core->ctx.tls ? maybe_tls_stream{std::move(socket), core->ctx.tls->current()}
                                : maybe_tls_stream{std::move(socket)};
    auto s = std::make_shared<http_session>(core, std::move(stream), std::move(slot));
    if (core->connections.load() > lim.max_connections) {
      // The oldest waiting connection goes; a full address sheds only its own, so that one
      // address cannot push everyone else's keep-alive connections out.
      if (auto victim = core->claim_oldest_waiting(client_full ? &client : nullptr)) {
        victim->shutdown();
        core->shed.fetch_add(1);
      } else if (!client_full) {
        s->limit_to_health("too many connections (limit " + std::to_string(lim.max_connections) +
                           "), all of them busy");
      }
    }
    if (client_full)
      s->limit_to_health("too many connections from " + client + " (limit " +
                         std::to_string(lim.max_connections_per_client) + " per client)");
    if (client_full || core->connections.load() > lim.max_connections)
      core->log_overload();
    s->start();
  }

  std::shared_ptr<server_core> core;
  std::optional<tcp::acceptor> acceptor;
  std::optional<asio::steady_timer> accept_pause;
  std::uint64_t collector = 0;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;
  std::vector<std::thread> threads;
  std::uint16_t port = 0;
  bool running = false;
};

http_server::http_server(server_context ctx) : impl_(std::make_unique<impl>(ctx)) {}

http_server::~http_server() {
  stop();
}

sreh::error http_server::start(const std::string& host, std::uint16_t port,
                               actors::failure_handler failed) {
  auto& d = *impl_;
  if (d.running)
    return {errc::conflict, "http server already started"};
  auto where = host + ":" + std::to_string(port);
  try {
    tcp::resolver resolver(d.core->ioc);
    auto results = resolver.resolve(host, std::to_string(port), tcp::resolver::passive);
    if (results.empty())
      return {errc::invalid_argument, "cannot resolve listen address " + where};
    auto ep = results.begin()->endpoint();
    d.acceptor.emplace(asio::make_strand(d.core->ioc));
    d.acceptor->open(ep.protocol());
    d.acceptor->set_option(asio::socket_base::reuse_address(true));
    d.acceptor->bind(ep);
    d.acceptor->listen(asio::socket_base::max_listen_connections);
    d.port = d.acceptor->local_endpoint().port();
  } catch (const boost::system::system_error& e) {
    d.acceptor.reset();
    return {errc::unavailable, "cannot listen on " + where + ": " + e.code().message()};
  }
  d.work.emplace(d.core->ioc.get_executor());
  d.do_accept();
  auto n = std::max<std::int64_t>(1, d.core->ctx.cfg.limits.http_threads);
  for (std::int64_t i = 0; i < n; ++i)
    d.threads.emplace_back([core = d.core, failed] {
      for (;;) {
        std::string why = "an unknown exception";
        try {
          core->ioc.run();
          return;
        } catch (const std::exception& e) {
          why = e.what();
        } catch (...) {
        }
        core->log->error("http thread: unexpected exception: {}{}", why,
                         failed ? "; the front is restarted" : "");
        // The loop goes on: it closes the connections when the supervisor stops this server.
        if (failed)
          failed("the io loop threw: " + why);
      }
    });
  d.running = true;
  d.core->log->info("listening on {}:{} ({} threads)", host, d.port, n);
  return {};
}

std::uint16_t http_server::port() const {
  return impl_->port;
}

void http_server::stop() {
  auto& d = *impl_;
  if (!d.running)
    return;
  d.running = false;
  d.core->stopping = true;
  asio::post(d.acceptor->get_executor(), [&d] {
    beast::error_code ignored;
    d.acceptor->close(ignored);
    if (d.accept_pause)
      d.accept_pause->cancel();
  });
  d.core->close_all();
  d.work.reset();
  // Give open connections a moment to close; then stop the loop regardless.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  while (d.core->connections.load() > 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  d.core->ioc.stop();
  for (auto& t : d.threads)
    t.join();
  d.threads.clear();
  // Queued work sees `stopping` and returns at once (it holds sessions, which hold the core that
  // owns the pool: dropping it unrun would leak them); running work ends with its store call.
  d.core->handlers.join();
  d.acceptor.reset();
  d.core->log->info("stopped");
}

} // namespace sreh::net
