// Liveness, readiness and the stats snapshot.
#include "problem.hpp"
#include "routes.hpp"
#include "sreh/core/json.hpp"

namespace sreh::net {

namespace {

reply readyz(server_context& ctx, const request& req) {
  std::string why;
  if (!ctx.kernel.ready())
    why = "kernel is not ready (recovery running or store away)";
  if (auto err = ctx.store.ping()) {
    if (!why.empty())
      why += "; ";
    why += "store is not reachable: " + err.message;
  }
  if (!why.empty())
    return problem(503, "unavailable", why, req);
  return json_reply(200, R"({"status":"ready"})");
}

reply stats(server_context& ctx, const request& req, std::int64_t connections) {
  auto st = ctx.store.stats();
  if (!st)
    return problem(st.error(), req);
  auto ks = ctx.kernel.stats();
  rapidjson::StringBuffer buf;
  json::writer w(buf);
  w.StartObject();
  w.Key("kernel");
  w.StartObject();
  w.Key("ready");
  w.Bool(ctx.kernel.ready());
  w.Key("active_runs");
  w.Int64(ks.active_runs);
  w.Key("started");
  w.Int64(ks.started);
  w.Key("finished");
  w.Int64(ks.finished);
  w.Key("recovered");
  w.Int64(ks.recovered);
  w.Key("steps");
  w.Int64(ks.steps);
  w.EndObject();
  w.Key("store");
  w.StartObject();
  w.Key("runs");
  w.Int64(st->runs);
  w.Key("steps");
  w.Int64(st->steps);
  w.Key("events");
  w.Int64(st->events);
  w.Key("last_event_seq");
  w.Int64(st->last_event_seq);
  w.EndObject();
  w.Key("http");
  w.StartObject();
  w.Key("connections");
  w.Int64(connections);
  w.Key("sse_subscribers");
  w.Uint64(ctx.hub.subscribers());
  w.Key("hub_last_seq");
  w.Int64(ctx.hub.last_seq());
  w.EndObject();
  w.EndObject();
  return json_reply(200, {buf.GetString(), buf.GetSize()});
}

} // namespace

void add_health_routes(router& r, server_context& ctx, std::function<std::int64_t()> connections) {
  auto* c = &ctx;
  r.add("GET", "/healthz", access::open,
        [](const request&, responder s) { s.send(json_reply(200, R"({"status":"ok"})")); });
  r.add("GET", "/readyz", access::open,
        [c](const request& q, responder s) { s.send(readyz(*c, q)); });
  r.add("GET", "/v1/stats", access::viewer, [c, connections](const request& q, responder s) {
    s.send(stats(*c, q, connections ? connections() : 0));
  });
}

} // namespace sreh::net
