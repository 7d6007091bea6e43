// GET /v1/runs/{id}/postmortem and GET /v1/works/{id}/postmortem (docs/postmortems.md): a finished
// run's postmortem, generated from its journal and approvals, or a closed Work's, from its
// timeline and its runs; as Markdown (`Accept: text/markdown`) or JSON (otherwise). Viewers read
// them; a run still under way or a Work still open is 409 naming its state.
#include "core/postmortem/postmortem.hpp"

#include <fmt/format.h>

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

reply postmortem_reply(actors::postmortem_service& pm, const request& req, bool of_work) {
  const auto& id = req.params.at("id");
  const char* prefix = of_work ? "wrk" : "run";
  if (!is_valid_id(id, prefix))
    return problem(400, "invalid-argument",
                   fmt::format("{} id '{}' is malformed (expected {}_ followed by 26 characters)",
                               of_work ? "work" : "run", id, prefix),
                   req);
  auto doc = of_work ? pm.of_work(id) : pm.of_run(id);
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
  for (bool of_work : {false, true})
    r.add("GET", of_work ? "/v1/works/{id}/postmortem" : "/v1/runs/{id}/postmortem", access::viewer,
          [c, of_work](const request& q, responder s) {
            if (c->postmortems == nullptr)
              return s.send(problem(503, "unavailable", "this node writes no postmortems", q));
            s.send(postmortem_reply(*c->postmortems, q, of_work));
          });
}

} // namespace sreh::net
