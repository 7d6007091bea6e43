// Liveness, readiness and the stats snapshot.
#include <fmt/format.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string_view>

#include "core/base/json.hpp"
#include "net/http/problem.hpp"
#include "net/http/routes/routes.hpp"

namespace sreh::net {

namespace {

/// The store's answer to readiness probes: one ping at a time, at most one a second; the probes
/// in between get the last answer, or "no answer" once the ping in flight has taken over 2 s. A
/// database that hangs then holds one HTTP thread, not every thread a probe (Kubernetes, a load
/// balancer) lands on.
class store_probe {
 public:
  sreh::error check(persistence::store& st) {
    using namespace std::chrono;
    {
      std::lock_guard lk{mtx_};
      const auto now = steady_clock::now();
      if (busy_) {
        const auto waited = duration_cast<milliseconds>(now - at_).count();
        if (waited < 2'000)
          return last_;
        return {errc::unavailable,
                fmt::format("the store has not answered a ping for {} ms", waited)};
      }
      if (checked_ && now - at_ < seconds{1})
        return last_;
      busy_ = true;
      at_ = now;
    }
    sreh::error err{errc::internal, "the store's ping threw"};
    try {
      err = st.ping();
    } catch (...) {
    }
    std::lock_guard lk{mtx_};
    busy_ = false;
    checked_ = true;
    at_ = steady_clock::now();
    last_ = err;
    return err;
  }

 private:
  std::mutex mtx_;
  bool busy_ = false;
  bool checked_ = false;
  std::chrono::steady_clock::time_point at_; // the ping in flight started, or the last ended
  sreh::error last_{errc::unavailable, "not checked yet (the first check is running)"};
};

reply readyz(server_context& ctx, store_probe& probe, const request& req) {
  std::string why;
  if (!ctx.kernel.ready())
    why = "kernel is not ready (recovery running or store away)";
  if (ctx.tree != nullptr)
    for (const auto& c : ctx.tree->failed()) {
      if (!why.empty())
        why += "; ";
      why += fmt::format("{} failed and is not restarted any more ({} restarts; last error: {})",
                         c.name, c.restarts, c.last_error);
    }
  if (auto err = probe.check(ctx.store)) {
    if (!why.empty())
      why += "; ";
    why += "store is not reachable: " + err.message;
  }
  if (!why.empty())
    return problem(503, "unavailable", why, req);
  return json_reply(200, R"({"status":"ready"})");
}

// `"key": value` members of the hand-written objects below.
using net::put; // the string one (routes.hpp), beside the numbers here
void put(json::writer& w, const char* key, std::int64_t v) {
  w.Key(key);
  w.Int64(v);
}
void put(json::writer& w, const char* key, std::uint64_t v) {
  w.Key(key);
  w.Uint64(v);
}
void put_bool(json::writer& w, const char* key, bool v) {
  w.Key(key);
  w.Bool(v);
}

reply stats(server_context& ctx, const request& req, const front_counters& front) {
  auto st = ctx.store.stats();
  if (!st)
    return problem(st.error(), req);
  auto ks = ctx.kernel.stats();
  rapidjson::StringBuffer buf;
  json::writer w(buf);
  w.StartObject();
  w.Key("kernel");
  w.StartObject();
  put_bool(w, "ready", ctx.kernel.ready());
  put(w, "active_runs", ks.active_runs);
  put(w, "started", ks.started);
  put(w, "finished", ks.finished);
  put(w, "recovered", ks.recovered);
  put(w, "steps", ks.steps);
  w.EndObject();
  w.Key("store");
  w.StartObject();
  put(w, "runs", st->runs);
  put(w, "steps", st->steps);
  put(w, "events", st->events);
  put(w, "last_event_seq", st->last_event_seq);
  w.EndObject();
  w.Key("http");
  w.StartObject();
  put(w, "connections", front.connections);
  put(w, "shed", front.shed);
  put(w, "limited", front.limited);
  put(w, "header_timeouts", front.header_timeouts);
  put(w, "sse_subscribers", static_cast<std::uint64_t>(ctx.hub.subscribers()));
  put(w, "hub_last_seq", ctx.hub.last_seq());
  w.EndObject();
  if (ctx.event_relay != nullptr) {
    const auto r = ctx.event_relay->stats();
    w.Key("relay");
    w.StartObject();
    put_bool(w, "active", r.active);
    put_bool(w, "connected", r.connected);
    put(w, "offset", r.offset);
    put(w, "lag", r.lag);
    put(w, "published", r.published);
    put(w, "acked", r.acked);
    put(w, "duplicates", r.duplicates);
    put(w, "errors", r.errors);
    put(w, "gap_waits", r.gap_waits);
    put(w, "last_error", r.last_error);
    w.EndObject();
  }
  if (ctx.feed != nullptr) {
    const auto f = ctx.feed->stats();
    w.Key("feed");
    w.StartObject();
    put_bool(w, "connected", f.connected);
    put(w, "last_seq", f.last_seq);
    put(w, "received", f.received);
    put(w, "delivered", f.delivered);
    put(w, "duplicates", f.duplicates);
    put(w, "filled_from_store", f.filled_from_store);
    put(w, "resets", f.resets);
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
  w.StartObject();
  put_bool(w, "clustered", v.clustered);
  put(w, "cluster", v.name);
  put(w, "self", v.self_id);
  put(w, "heartbeat_ms", v.heartbeat_ms);
  put(w, "lease_ttl_ms", v.lease_ttl_ms);
  put_bool(w, "store_reachable", v.store_reachable);
  w.Key("nodes");
  w.StartArray();
  for (const auto& n : v.nodes) {
    w.StartObject();
    put(w, "id", n.id);
    put(w, "http", n.http);
    put(w, "cluster", n.cluster);
    w.Key("roles");
    w.StartArray();
    for (const auto& r : n.roles)
      w.String(r.data(), static_cast<rapidjson::SizeType>(r.size()));
    w.EndArray();
    put_bool(w, "self", n.self);
    put(w, "state", n.state);
    put_bool(w, "connected", n.connected);
    if (!n.link_error.empty())
      put(w, "link_error", n.link_error);
    put(w, "heartbeat_age_ms", n.heartbeat_age_ms);
    put(w, "active_runs", n.active_runs);
    put(w, "parked_runs", n.parked_runs);
    put(w, "owned_runs", n.owned_runs);
    w.Key("started_at");
    json::timestamp(w, n.started_at);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return json_reply(200, {buf.GetString(), buf.GetSize()});
}

} // namespace

void add_health_routes(router& r, server_context& ctx, std::function<front_counters()> front) {
  auto* c = &ctx;
  r.add_nonblocking("GET", "/healthz", access::open, [](const request&, responder s) {
    s.send(json_reply(200, R"({"status":"ok"})"));
  });
  r.add("GET", "/readyz", access::open,
        [c, probe = std::make_shared<store_probe>()](const request& q, responder s) {
          s.send(readyz(*c, *probe, q));
        });
  r.add("GET", "/v1/cluster/nodes", access::viewer,
        [c](const request&, responder s) { s.send(cluster_nodes(*c)); });
  r.add("GET", "/v1/stats", access::viewer, [c, front](const request& q, responder s) {
    s.send(stats(*c, q, front ? front() : front_counters{}));
  });
}

} // namespace sreh::net
