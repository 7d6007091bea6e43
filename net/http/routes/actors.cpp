// The node's supervision tree: GET /v1/actors.
#include "core/base/json.hpp"
#include "net/http/routes/routes.hpp"

namespace sreh::net {

namespace {

/// `{"actors":[{"name","parent","state","restarts","last_error"}]}`: the children of the
/// node's supervisors, in the order they were started; last_error is null for a child that
/// never died.
reply actors_list(const server_context& ctx) {
  rapidjson::StringBuffer buf;
  json::writer w(buf);
  w.StartObject();
  w.Key("actors");
  w.StartArray();
  if (ctx.tree != nullptr)
    for (const auto& c : ctx.tree->children()) {
      w.StartObject();
      w.Key("name");
      w.String(c.name);
      w.Key("parent");
      w.String(c.parent);
      w.Key("state");
      w.String(actors::to_string(c.state));
      w.Key("restarts");
      w.Int(c.restarts);
      w.Key("last_error");
      if (c.last_error.empty())
        w.Null();
      else
        w.String(c.last_error);
      w.EndObject();
    }
  w.EndArray();
  w.EndObject();
  return json_reply(200, {buf.GetString(), buf.GetSize()});
}

} // namespace

void add_actor_routes(router& r, server_context& ctx) {
  auto* c = &ctx;
  // A snapshot under one mutex: cheap enough for the HTTP thread.
  r.add_nonblocking("GET", "/v1/actors", access::viewer,
                    [c](const request&, responder s) { s.send(actors_list(*c)); });
}

} // namespace sreh::net
