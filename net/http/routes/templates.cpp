// GET /v1/templates and GET /v1/templates/{name}: the Work templates this node loaded
// (works.templates), with their fields, SLA deadlines, done-criteria and double-texting policy.
// Loaded at start and read-only afterwards, so the handlers never block.
#include "core/base/json.hpp"
#include "core/works/template.hpp"
#include "net/http/problem.hpp"
#include "net/http/routes/routes.hpp"

namespace sreh::net {

namespace {

void write_field(json::writer& w, const works::field_spec& f) {
  w.StartObject();
  put(w, "name", f.name);
  put(w, "type", works::to_string(f.type));
  w.Key("required");
  w.Bool(f.required);
  if (f.default_value)
    put(w, "default", *f.default_value);
  if (!f.choices.empty()) {
    w.Key("values");
    w.StartArray();
    for (const auto& c : f.choices)
      w.String(c);
    w.EndArray();
  }
  if (!f.description.empty())
    put(w, "description", f.description);
  w.EndObject();
}

void write_template(json::writer& w, const works::work_template& t) {
  w.StartObject();
  put(w, "name", t.name);
  put(w, "kind", t.kind);
  put(w, "version", t.version);
  if (!t.label.empty())
    put(w, "label", t.label);
  put(w, "description", t.description);
  put(w, "title", t.title.text);
  w.Key("fields");
  w.StartArray();
  for (const auto& f : t.fields)
    write_field(w, f);
  w.EndArray();
  w.Key("sla");
  w.StartObject();
  for (auto [key, ms] :
       {std::pair{"acknowledge_ms", t.sla.acknowledge_ms},
        std::pair{"mitigate_ms", t.sla.mitigate_ms}, std::pair{"resolve_ms", t.sla.resolve_ms}})
    if (ms > 0) {
      w.Key(key);
      w.Int64(ms);
    }
  w.EndObject();
  put(w, "goal", t.goal.text);
  if (!t.flow.empty())
    put(w, "flow", t.flow);
  w.Key("labels");
  w.StartObject();
  for (const auto& [k, v] : t.labels)
    put(w, k.c_str(), v.text);
  w.EndObject();
  if (!t.policy_scope.empty())
    put(w, "policy", t.policy_scope);
  if (t.done) {
    w.Key("done");
    w.StartObject();
    put(w, "condition", t.done->condition.text);
    w.Key("for_s");
    w.Int64(t.done->for_s);
    w.EndObject();
  }
  put(w, "double_texting", works::to_string(t.on_trigger));
  put(w, "source", t.source);
  w.EndObject();
}

} // namespace

void add_template_routes(router& r, server_context& ctx) {
  const auto* all = &ctx.cfg.works.loaded;
  r.add_nonblocking("GET", "/v1/templates", access::viewer, [all](const request&, responder s) {
    s.send(json_reply(200, list_body("templates", *all, [](json::writer& w, const auto& x) {
                        write_template(w, x);
                      })));
  });
  r.add_nonblocking(
    "GET", "/v1/templates/{name}", access::viewer, [all](const request& q, responder s) {
      const auto& name = q.params.at("name");
      for (const auto& t : *all)
        if (t.name == name) {
          return s.send(
            json_reply(200, item_body("template", t, [](json::writer& w, const auto& x) {
                         write_template(w, x);
                       })));
        }
      std::string names;
      for (const auto& t : *all)
        names += (names.empty() ? "" : ", ") + t.name;
      s.send(problem(404, "not-found",
                     "no Work template '" + name + "' (this node has: " +
                       (names.empty() ? std::string{"none; set works.templates"} : names) + ")",
                     q));
    });
}

} // namespace sreh::net
