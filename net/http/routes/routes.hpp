#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <variant>

#include "core/base/json.hpp"
#include "core/base/json_object.hpp"
#include "core/model/json_codecs.hpp"
#include "net/http/http_message.hpp"
#include "net/http/http_server.hpp"
#include "net/http/router.hpp"
#include "net/http/sse_format.hpp"

namespace sreh::net {

/// `"key": "v"` into an object being written (the route files' replies).
inline void put(json::writer& w, const char* key, std::string_view v) {
  w.Key(key);
  w.String(v.data(), static_cast<rapidjson::SizeType>(v.size()));
}

/// `{...}`: an object whose members `fn(writer&)` writes.
template <class Fn>
std::string object_body(Fn fn) {
  return json::build([&](json::writer& w) {
    w.StartObject();
    fn(w);
    w.EndObject();
  });
}

/// Writes the member `"KEY":[...]`, each of `items` written by `each(writer&, item)`.
template <class Items, class Each>
void write_items(json::writer& w, const char* key, const Items& items, Each each) {
  w.Key(key);
  w.StartArray();
  for (const auto& x : items)
    each(w, x);
  w.EndArray();
}

/// `{"KEY": x in its wire shape}`.
template <class T>
std::string envelope(const char* key, const T& x) {
  return object_body([&](json::writer& w) {
    w.Key(key);
    json::write(w, x);
  });
}

/// `{"KEY":[...]}`: each of `items` written by `each(writer&, item)`.
template <class Items, class Each>
std::string list_body(const char* key, const Items& items, Each each) {
  return object_body([&](json::writer& w) { write_items(w, key, items, each); });
}

/// `{"KEY":...}`: `x` written by `each(writer&, x)`.
template <class Item, class Each>
std::string item_body(const char* key, const Item& x, Each each) {
  return object_body([&](json::writer& w) {
    w.Key(key);
    each(w, x);
  });
}

/// `{"<key>": [each item in its wire shape], "next_cursor": cursor or null}`: the body of the
/// paged list replies.
template <class Items>
std::string page_body(const char* key, const Items& items, const std::string& next_cursor) {
  return object_body([&](json::writer& w) {
    write_items(w, key, items, [](json::writer& o, const auto& x) { json::write(o, x); });
    w.Key("next_cursor");
    if (next_cursor.empty())
      w.Null();
    else
      w.String(next_cursor);
  });
}

/// POST /v1/goals, GET /v1/runs, GET /v1/runs/{id}, GET /v1/runs/{id}/steps,
/// POST /v1/runs/{id}/cancel.
void add_run_routes(router& r, server_context& ctx);

/// What the front's connection handling has done, for GET /v1/stats.
struct front_counters {
  std::int64_t connections = 0;      // open now
  std::uint64_t shed = 0;            // idle or incomplete connections closed for newcomers
  std::uint64_t limited = 0;         // connections let ask only /healthz and /readyz
  std::uint64_t header_timeouts = 0; // request headers that did not arrive in time
};

/// GET /healthz, GET /readyz, GET /v1/stats. `front` reports the connection counters.
void add_health_routes(router& r, server_context& ctx, std::function<front_counters()> front);

/// GET /v1/actors: the children of the node's supervisors (server_context::tree).
void add_actor_routes(router& r, server_context& ctx);

/// GET /v1/runs/{id}/events, GET /v1/works/{id}/events and GET /v1/events (SSE).
void add_event_routes(router& r, server_context& ctx);

/// GET /v1/approvals, GET /v1/approvals/{id}, POST /v1/approvals/{id}/decision.
void add_approval_routes(router& r, server_context& ctx);

/// GET /v1/tools: the node's tools with their schemas, risk class and whether they mutate.
void add_tool_routes(router& r, server_context& ctx);

/// GET /metrics: the node's metrics in the Prometheus text format (role viewer; 404 without a
/// registry).
void add_metrics_route(router& r, server_context& ctx);

/// GET /v1/templates, GET /v1/templates/{name}: the Work templates of works.templates.
void add_template_routes(router& r, server_context& ctx);

/// GET /v1/flows, GET /v1/flows/{name}: the flows of `flows: DIR` with their steps and graph.
void add_flow_routes(router& r, server_context& ctx);

/// GET /v1/works, POST /v1/works, GET /v1/works/{id}, POST /v1/works/{id}/{command},
/// GET /v1/world, GET /v1/world/entities/{id}.
void add_work_routes(router& r, server_context& ctx);

/// GET and POST /v1/memory, GET, PUT and DELETE /v1/memory/{id}, GET /v1/memory/{id}/versions,
/// POST /v1/memory/{id}/rollback: long-term memory (503 when server_context::memory is null).
void add_memory_routes(router& r, server_context& ctx);

/// GET /v1/runs/{id}/postmortem: a finished run's postmortem, Markdown or JSON (503 when
/// server_context::postmortems is null).
void add_postmortem_routes(router& r, server_context& ctx);

/// POST and GET /v1/runs/{id}/messages: a run's conversation (docs/conversation.md).
void add_message_routes(router& r, server_context& ctx);

/// GET /v1/notifications (?state=failed: the dead letters), GET /v1/notifications/{id},
/// POST /v1/notifications/{id}/retry (operators).
void add_notification_routes(router& r, server_context& ctx);

/// The `Idempotency-Key` header into `key` (left as is when absent); a problem when malformed.
[[nodiscard]] std::optional<reply> read_idempotency_key(const request& req, std::string& key);
/// Submits a run (a goal, or a flow: POST /v1/flows/{name}/runs) and answers 201 with
/// `{"run": ...}` and a Location, 200 when the idempotency key named the same run, 422 when it
/// named a run of another goal or flow with other inputs.
void submit_run(server_context& ctx, const request& req, responder res, goal_request run);
/// The request's body as a JSON object (at most limits.max_json_depth deep); a 400 naming the
/// expected `shape` when it is empty, the parse error when it is not an object.
[[nodiscard]] std::variant<rapidjson::Document, reply>
request_object(server_context& ctx, const request& req, const char* shape);
/// GET and POST /v1/candidates, GET /v1/candidates/{id}, POST /v1/candidates/{id}/promote and
/// POST /v1/candidates/rollback: the evolution gate (503 when server_context::candidates is
/// null).
void add_candidate_routes(router& r, server_context& ctx);
/// The `limit` query parameter (1..500): nothing when absent; `bad` set when malformed.
[[nodiscard]] std::optional<int> read_limit(const request& req, std::optional<reply>& bad);

/// True for the event kinds that end a run (run.succeeded, run.failed, run.cancelled).
[[nodiscard]] bool is_terminal_kind(const std::string& kind);

} // namespace sreh::net
