// GET /v1/runs/{id}/postmortem (docs/postmortems.md): a finished run's postmortem, generated from
// its journal and approvals, as Markdown (`Accept: text/markdown`) or JSON (otherwise). Viewers
// read it; a run still under way is 409 naming its state.
#include "core/postmortem/postmortem.hpp"

#include "actors/postmortem/postmortem_service.hpp"
#include "core/base/id.hpp"
#include "core/base/json_object.hpp"
#include "net/http/problem.hpp"
#include "net/http/routes/routes.hpp"

namespace sreh::net {

namespace {

bool wants_markdown(const request& req) {
  const auto* accept = req.header("accept");
  return accept != nullptr && (accept->find("text/markdown") != std::string::npos ||
                               accept->find("text/plain") != std::string::npos);
}

reply run_postmortem(actors::postmortem_service& pm, const request& req) {
  const auto& id = req.params.at("id");
  if (!is_valid_id(id, "run"))
    return problem(400, "invalid-argument",
                   "run id '" + id + "' is malformed (expected run_ followed by 26 characters)",
                   req);
  auto doc = pm.of_run(id);
  if (!doc)
    return problem(doc.error(), req);
  if (wants_markdown(req)) {
    reply rep;
    rep.status = 200;
    rep.content_type = "text/markdown; charset=utf-8";
    rep.body = postmortem::to_markdown(*doc);
    return rep;
  }
  return json_reply(200, json::object("postmortem", json::raw_text{postmortem::to_json(*doc)}));
}

} // namespace

void add_postmortem_routes(router& r, server_context& ctx) {
  auto* c = &ctx;
  r.add("GET", "/v1/runs/{id}/postmortem", access::viewer, [c](const request& q, responder s) {
    if (c->postmortems == nullptr)
      return s.send(problem(503, "unavailable", "this node writes no postmortems", q));
    s.send(run_postmortem(*c->postmortems, q));
  });
}

} // namespace sreh::net
