#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "actors/hub/event_hub.hpp"
#include "actors/kernel/kernel_api.hpp"
#include "actors/runtime/supervision.hpp"
#include "actors/works/works_api.hpp"
#include "config/node/node_config.hpp"
#include "core/base/clock.hpp"
#include "core/base/id.hpp"
#include "core/base/metrics.hpp"
#include "net/http/auth.hpp"
#include "net/http/tls.hpp"
#include "net/nats/event_feed.hpp"
#include "net/nats/relay.hpp"
#include "persistence/store/store.hpp"

namespace sreh::actors {
class tool_registry;
class memory_service;
class postmortem_service;
class candidate_service;
class notifier;
} // namespace sreh::actors

namespace sreh::net {

class router;
struct server_context;

/// A group of routes that a plugin adds to the front (`GET /v1/...` of its own): called once,
/// before the server starts, with the router and the context its handlers may keep pointers to.
using route_group = std::function<void(router&, server_context&)>;

/// What the HTTP front needs from the node. All references outlive the server.
struct server_context {
  persistence::store& store;
  actors::kernel_api& kernel;
  actors::event_hub& hub;
  const config::node_config& cfg;
  const sreh::clock& clock;
  id_generator& ids;
  /// The tokens the server accepts. Null: only what the config gives without touching files
  /// (auth none, or the configured digests; with neither, no token is accepted).
  std::shared_ptr<const token_table> tokens = {};
  /// False on a cluster member without the `api` role: it serves only /healthz, /readyz,
  /// /v1/stats, /v1/actors and /v1/cluster/nodes, and answers other /v1 requests with 503
  /// naming the reason.
  bool api = true;
  /// Shown on /v1/stats when the node has them (null: none).
  const net::relay* event_relay = nullptr;
  const event_feed* feed = nullptr;
  /// The node's tools, for GET /v1/tools (null: the route answers 503).
  const actors::tool_registry* tools = nullptr;
  /// Route groups the plugins registered, added after the front's own.
  std::vector<route_group> routes = {};
  /// The node's supervision tree, for /v1/actors and /readyz (null: not shown).
  const actors::supervision_table* tree = nullptr;
  /// The node's metrics: GET /metrics exposes them and the front counts its requests there
  /// (null: no /metrics, nothing counted).
  metrics::registry* metrics = nullptr;
  /// The Works control plane (null: the Works routes answer 503).
  actors::works_api* works = nullptr;
  /// HTTPS (`tls:`): every connection starts with a TLS handshake (null: plain HTTP).
  std::shared_ptr<tls_server_context> tls = {};
  /// Long-term memory (null: the memory routes answer 503).
  actors::memory_service* memory = nullptr;
  /// Postmortems of finished runs (null: the postmortem route answers 503).
  actors::postmortem_service* postmortems = nullptr;
  /// The evolution gate (null: the candidate routes answer 503).
  actors::candidate_service* candidates = nullptr;
  /// The notifier, woken when a delivery is retried (null: the poll finds it).
  actors::notifier* notifier = nullptr;
};

/// The Beast HTTP/1.1 server: REST under /v1, SSE streams, /healthz, /readyz. Runs its own
/// io_context on `cfg.limits.http_threads` threads; reaches the kernel only through kernel_api.
class http_server {
 public:
  explicit http_server(server_context ctx);
  ~http_server();
  http_server(const http_server&) = delete;
  http_server& operator=(const http_server&) = delete;

  /// Binds (SO_REUSEADDR) and starts serving. Port 0 picks a free port (see `port()`).
  /// `failed`: told of an exception that escaped the io loop, after which the server is
  /// considered broken (it goes on running only to be stopped); without it the loop logs the
  /// exception and goes on.
  [[nodiscard]] sreh::error start(const std::string& host, std::uint16_t port,
                                  actors::failure_handler failed = {});
  [[nodiscard]] std::uint16_t port() const;
  /// Stops accepting, closes every connection and joins the threads.
  void stop();

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

} // namespace sreh::net
