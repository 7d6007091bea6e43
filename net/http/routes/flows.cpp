// GET /v1/flows and GET /v1/flows/{name}: the flows this node loaded (`flows: DIR`), with their
// inputs, steps and graph. Loaded at start and read-only afterwards, so the handlers never
// block. (Running one, POST /v1/flows/{name}/runs, is not built yet: docs/flows.md.)
#include "core/base/json.hpp"
#include "core/flows/flow_json.hpp"
#include "net/http/problem.hpp"
#include "net/http/routes/routes.hpp"

namespace sreh::net {

void add_flow_routes(router& r, server_context& ctx) {
  const auto* all = &ctx.cfg.flows.loaded;
  r.add_nonblocking("GET", "/v1/flows", access::viewer, [all](const request&, responder s) {
    rapidjson::StringBuffer buf;
    json::writer w(buf);
    w.StartObject();
    w.Key("flows");
    w.StartArray();
    for (const auto& f : *all)
      flows::write_summary(w, f);
    w.EndArray();
    w.EndObject();
    s.send(json_reply(200, {buf.GetString(), buf.GetSize()}));
  });
  r.add_nonblocking(
    "GET", "/v1/flows/{name}", access::viewer, [all](const request& q, responder s) {
      const auto& name = q.params.at("name");
      for (const auto& f : *all)
        if (f.name == name) {
          rapidjson::StringBuffer buf;
          json::writer w(buf);
          w.StartObject();
          w.Key("flow");
          flows::write_detail(w, f);
          w.EndObject();
          return s.send(json_reply(200, {buf.GetString(), buf.GetSize()}));
        }
      std::string names;
      for (const auto& f : *all)
        names += (names.empty() ? "" : ", ") + f.name;
      s.send(problem(404, "not-found",
                     "no flow '" + name + "' (this node has: " +
                       (names.empty() ? std::string{"none; set flows: DIR"} : names) + ")",
                     q));
    });
}

} // namespace sreh::net
