// GET /metrics: the node's metrics in the Prometheus text exposition format 0.0.4, for
// Prometheus to scrape (with a viewer token: `authorization: {credentials_file: ...}` in the
// scrape config). Scrape-time collectors read counters only, never the store.
#include "net/http/problem.hpp"
#include "net/http/routes/routes.hpp"

namespace sreh::net {

void add_metrics_route(router& r, server_context& ctx) {
  auto* m = ctx.metrics;
  if (m == nullptr)
    return;
  r.add_nonblocking("GET", "/metrics", access::viewer, [m](const request&, responder s) {
    reply rep;
    rep.status = 200;
    rep.content_type = "text/plain; version=0.0.4; charset=utf-8";
    rep.body = m->expose();
    s.send(std::move(rep));
  });
}

} // namespace sreh::net
