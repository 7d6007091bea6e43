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
  auto num = [&w](const char* key, std::int64_t v) {
    w.Key(key);
    w.Int64(v);
  };
  auto flag = [&w](const char* key, bool v) {
    w.Key(key);
    w.Bool(v);
  };
  if (ctx.event_relay != nullptr) {
    const auto r = ctx.event_relay->stats();
    w.Key("relay");
    w.StartObject();
    flag("active", r.active);
    flag("connected", r.connected);
    num("offset", r.offset);
    num("lag", r.lag);
    num("published", static_cast<std::int64_t>(r.published));
    num("acked", static_cast<std::int64_t>(r.acked));
    num("duplicates", static_cast<std::int64_t>(r.duplicates));
    num("errors", static_cast<std::int64_t>(r.errors));
    num("gap_waits", static_cast<std::int64_t>(r.gap_waits));
    w.EndObject();
  }
  if (ctx.feed != nullptr) {
    const auto f = ctx.feed->stats();
    w.Key("feed");
    w.StartObject();
    flag("connected", f.connected);
    num("last_seq", f.last_seq);
    num("received", static_cast<std::int64_t>(f.received));
    num("delivered", static_cast<std::int64_t>(f.delivered));
    num("duplicates", static_cast<std::int64_t>(f.duplicates));
    num("filled_from_store", static_cast<std::int64_t>(f.filled_from_store));
    num("resets", static_cast<std::int64_t>(f.resets));
    w.EndObject();
  }
  w.EndObject();
  return json_reply(200, {buf.GetString(), buf.GetSize()});
}

/// GET /v1/cluster/nodes: the members, as this node sees them (a single node when standalone).
reply cluster_nodes(server_context& ctx) {
  const auto v = ctx.kernel.cluster();
  rapidjson::StringBuffer buf;
  json::writer w(buf);
  auto str = [&w](const char* key, const std::string& value) {
    w.Key(key);
    w.String(value.data(), static_cast<rapidjson::SizeType>(value.size()));
  };
  auto num = [&w](const char* key, std::int64_t value) {
    w.Key(key);
    w.Int64(value);
  };
  w.StartObject();
  w.Key("clustered");
  w.Bool(v.clustered);
  str("cluster", v.name);
  str("self", v.self_id);
  num("heartbeat_ms", v.heartbeat_ms);
  num("lease_ttl_ms", v.lease_ttl_ms);
  w.Key("store_reachable");
  w.Bool(v.store_reachable);
  w.Key("nodes");
  w.StartArray();
  for (const auto& n : v.nodes) {
    w.StartObject();
    str("id", n.id);
    str("http", n.http);
    str("cluster", n.cluster);
    w.Key("roles");
    w.StartArray();
    for (const auto& r : n.roles)
      w.String(r.data(), static_cast<rapidjson::SizeType>(r.size()));
    w.EndArray();
    w.Key("self");
    w.Bool(n.self);
    str("state", n.state);
    w.Key("connected");
    w.Bool(n.connected);
    if (!n.link_error.empty())
      str("link_error", n.link_error);
    num("heartbeat_age_ms", n.heartbeat_age_ms);
    num("active_runs", n.active_runs);
    num("parked_runs", n.parked_runs);
    num("owned_runs", n.owned_runs);
    w.Key("started_at");
    json::timestamp(w, n.started_at);
    w.EndObject();
  }
  w.EndArray();
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
  r.add("GET", "/v1/cluster/nodes", access::viewer,
        [c](const request&, responder s) { s.send(cluster_nodes(*c)); });
  r.add("GET", "/v1/stats", access::viewer, [c, connections](const request& q, responder s) {
    s.send(stats(*c, q, connections ? connections() : 0));
  });
}

} // namespace sreh::net
