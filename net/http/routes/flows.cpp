// GET /v1/flows and GET /v1/flows/{name}: the flows this node loaded (`flows: DIR`), with their
// inputs, steps and graph. Loaded at start and read-only afterwards, so these handlers never
// block. POST /v1/flows/{name}/runs starts a flow run (docs/flows.md, "Running a flow").
#include <fmt/format.h>

#include "core/base/json.hpp"
#include "core/flows/flow_json.hpp"
#include "core/flows/inputs.hpp"
#include "core/flows/runner.hpp"
#include "core/model/goal.hpp"
#include "net/http/problem.hpp"
#include "net/http/routes/routes.hpp"

namespace sreh::net {

namespace {

reply no_such_flow(const std::vector<flows::flow>& all, const std::string& name, const request& q) {
  std::string names;
  for (const auto& f : all)
    names += (names.empty() ? "" : ", ") + f.name;
  return problem(404, "not-found",
                 "no flow '" + name + "' (this node has: " +
                   (names.empty() ? std::string{"none; set flows: DIR"} : names) + ")",
                 q);
}

/// POST /v1/flows/{name}/runs `{"inputs": {...}, "labels": {...}}`.
void start_flow(server_context& ctx, const flows::flow& f, const request& q, responder s) {
  std::string key;
  if (auto bad = read_idempotency_key(q, key))
    return s.send(std::move(*bad));
  auto doc = json::parse_object(q.body.empty() ? std::string_view{"{}"} : q.body,
                                static_cast<int>(ctx.cfg.limits.max_json_depth));
  if (!doc)
    return s.send(problem(doc.error(), q));
  goal_request g;
  std::string inputs = "{}";
  for (const auto& m : doc->GetObject()) {
    std::string_view name{m.name.GetString(), m.name.GetStringLength()};
    if (name == "inputs") {
      if (!m.value.IsObject())
        return s.send(problem(
          400, "invalid-argument",
          fmt::format("field 'inputs': expected an object, got {}", json::type_of(m.value)), q));
      inputs = json::stringify(m.value);
    } else if (name == "labels") {
      if (auto err = parse_labels(m.value, g))
        return s.send(problem(err, q));
    } else {
      return s.send(
        problem(400, "invalid-argument",
                fmt::format("field '{}': unknown field (expected inputs or labels)", name), q));
    }
  }
  auto resolved = flows::resolve_inputs(f, inputs);
  if (!resolved)
    return s.send(problem(resolved.error(), q));
  g.goal = "flow " + f.name;
  g.kind = "flow";
  g.spec = flows::pin(f, *resolved);
  g.idempotency_key = key;
  g.submitter = q.who.name;
  g.budget = ctx.cfg.budget;
  g.budget.max_steps = std::max<std::int64_t>(g.budget.max_steps, flows::max_run_steps);
  submit_run(ctx, q, std::move(s), std::move(g));
}

} // namespace

void add_flow_routes(router& r, server_context& ctx) {
  const auto* all = &ctx.cfg.flows.loaded;
  r.add_nonblocking("GET", "/v1/flows", access::viewer, [all](const request&, responder s) {
    s.send(json_reply(200, list_body("flows", *all, [](json::writer& w, const auto& x) {
                        flows::write_summary(w, x);
                      })));
  });
  r.add_nonblocking(
    "GET", "/v1/flows/{name}", access::viewer, [all](const request& q, responder s) {
      const auto& name = q.params.at("name");
      for (const auto& f : *all)
        if (f.name == name) {
          return s.send(json_reply(200, item_body("flow", f, [](json::writer& w, const auto& x) {
                                     flows::write_detail(w, x);
                                   })));
        }
      s.send(no_such_flow(*all, name, q));
    });
  auto* c = &ctx;
  r.add("POST", "/v1/flows/{name}/runs", access::operator_,
        [c, all](const request& q, responder s) {
          const auto& name = q.params.at("name");
          for (const auto& f : *all)
            if (f.name == name)
              return start_flow(*c, f, q, std::move(s));
          s.send(no_such_flow(*all, name, q));
        });
}

} // namespace sreh::net
