// GET /v1/tools: the tools this node offers, with their argument schemas, risk class and
// whether they mutate — what an operator asks first of a new node. The registry is filled at
// start and read-only afterwards, so the handler never blocks.
#include "actors/tools/tool.hpp"
#include "core/base/json.hpp"
#include "net/http/problem.hpp"
#include "net/http/routes/routes.hpp"

namespace sreh::net {

namespace {

void write_tool(json::writer& w, const actors::tool& t) {
  w.StartObject();
  w.Key("name");
  w.String(t.name());
  w.Key("description");
  w.String(t.description());
  w.Key("risk");
  w.String(actors::to_string(t.risk()));
  // Mutating = anything a policy must decide on: every tool that is not read-only.
  w.Key("mutating");
  w.Bool(t.risk() != actors::risk_class::read_only);
  w.Key("idempotent");
  w.Bool(t.idempotent());
  w.Key("compensable");
  w.Bool(t.compensable());
  w.Key("blocking");
  w.Bool(t.blocking());
  w.Key("timeout_ms");
  w.Int64(t.timeout().count());
  w.Key("schema");
  json::raw(w, t.schema());
  w.EndObject();
}

reply list_tools(const actors::tool_registry& tools) {
  rapidjson::StringBuffer buf;
  json::writer w(buf);
  w.StartObject();
  w.Key("tools");
  w.StartArray();
  for (const auto& t : tools.all())
    write_tool(w, *t);
  w.EndArray();
  w.EndObject();
  return json_reply(200, {buf.GetString(), buf.GetSize()});
}

} // namespace

void add_tool_routes(router& r, server_context& ctx) {
  const auto* tools = ctx.tools;
  r.add_nonblocking("GET", "/v1/tools", access::viewer, [tools](const request& q, responder s) {
    if (!tools)
      return s.send(problem(503, "unavailable", "this node has no tool registry", q));
    s.send(list_tools(*tools));
  });
}

} // namespace sreh::net
