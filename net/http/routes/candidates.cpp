// The evolution gate (docs/evolve.md): POST /v1/candidates proposes a new version (operators),
// GET /v1/candidates and GET /v1/candidates/{id} read them (viewers), POST
// /v1/candidates/{id}/promote is an approver's vote on a promotion (never the proposer's), POST
// /v1/candidates/rollback restores the version the current candidate replaced (approvers).
// Each change is in the audit chain with the caller (actors/evolve/candidate_service.hpp).
#include <fmt/format.h>

#include "actors/evolve/candidate_service.hpp"
#include "core/base/id.hpp"
#include "core/evolve/candidate.hpp"
#include "net/http/problem.hpp"
#include "net/http/routes/routes.hpp"

namespace sreh::net {

namespace {

std::optional<reply> check_candidate_id(const request& req, const std::string& id) {
  if (is_valid_id(id, "cnd"))
    return std::nullopt;
  return problem(400, "invalid-argument",
                 "candidate id '" + id + "' is malformed (expected cnd_ followed by 26 characters)",
                 req);
}

reply candidate_reply(const expected<evolve::candidate>& c, int status, const request& req) {
  if (!c)
    return problem(c.error(), req);
  auto out = json_reply(status, json::object("candidate", json::raw_text{evolve::to_json(*c)}));
  if (status == 202)
    out.headers.emplace_back("Location", "/v1/candidates/" + c->id);
  return out;
}

/// A body member that must be a string when present; `bad` names it otherwise.
std::string string_member(const rapidjson::Document& d, const char* name, bool required,
                          std::optional<reply>& bad, const request& req) {
  const auto* v = json::member(d, name);
  if (v == nullptr || v->IsNull()) {
    if (required && !bad)
      bad = problem(400, "invalid-argument", fmt::format("field '{}' is required", name), req);
    return {};
  }
  if (!v->IsString()) {
    if (!bad)
      bad =
        problem(400, "invalid-argument",
                fmt::format("field '{}': expected a string, got {}", name, json::type_of(*v)), req);
    return {};
  }
  return {v->GetString(), v->GetStringLength()};
}

/// `kind` of a body ("knowledge_base" when absent); `bad` names an unknown one.
evolve::artefact kind_member(const rapidjson::Document& d, std::optional<reply>& bad,
                             const request& req) {
  auto name = string_member(d, "kind", false, bad, req);
  if (name.empty())
    return evolve::artefact::knowledge_base;
  auto k = evolve::parse_artefact(name);
  if (!k && !bad)
    bad = problem(400, "invalid-argument",
                  fmt::format("field 'kind': '{}' is not a kind of candidate (knowledge_base, "
                              "policy, prompt, model_route)",
                              name),
                  req);
  return k.value_or(evolve::artefact::knowledge_base);
}

/// Members of `d` other than `allowed`: a 400 naming the first.
std::optional<reply> unknown_member(const rapidjson::Document& d,
                                    std::initializer_list<std::string_view> allowed,
                                    const request& req) {
  for (const auto& m : d.GetObject()) {
    std::string_view key{m.name.GetString(), m.name.GetStringLength()};
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end())
      return problem(400, "invalid-argument", fmt::format("unknown field '{}'", key), req);
  }
  return std::nullopt;
}

reply propose(server_context& ctx, actors::candidate_service& gate, const request& req) {
  auto doc = request_object(ctx, req, R"({"kind"?, "body", "reason"?})");
  if (auto* bad = std::get_if<reply>(&doc))
    return std::move(*bad);
  const auto& d = std::get<rapidjson::Document>(doc);
  if (auto bad = unknown_member(d, {"kind", "body", "reason"}, req))
    return std::move(*bad);
  std::optional<reply> bad;
  auto kind = kind_member(d, bad, req);
  auto body = string_member(d, "body", true, bad, req);
  auto reason = string_member(d, "reason", false, bad, req);
  if (bad)
    return std::move(*bad);
  return candidate_reply(gate.propose(kind, std::move(body), std::move(reason), req.who.name), 202,
                         req);
}

reply list(actors::candidate_service& gate, const request& req) {
  std::optional<reply> bad;
  auto limit = read_limit(req, bad);
  if (bad)
    return std::move(*bad);
  auto all = gate.list(limit.value_or(100));
  if (!all)
    return problem(all.error(), req);
  return json_reply(200, object_body([&](json::writer& w) {
                      w.Key("current");
                      w.StartObject();
                      for (auto kind : evolve::all_artefacts) {
                        w.Key(to_string(kind));
                        w.String(gate.current(kind).c_str());
                      }
                      w.EndObject();
                      write_items(w, "candidates", *all, [](json::writer& x, evolve::candidate c) {
                        c.body.clear(); // GET /v1/candidates/{id} has the body and the report
                        c.report = "null";
                        json::raw(x, evolve::to_json(c));
                      });
                    }));
}

reply promote(server_context& ctx, actors::candidate_service& gate, const request& req) {
  const auto& id = req.params.at("id");
  if (auto bad = check_candidate_id(req, id))
    return std::move(*bad);
  approval_vote vote;
  if (!req.body.empty()) {
    auto doc = request_object(ctx, req, R"({"comment"?})");
    if (auto* bad = std::get_if<reply>(&doc))
      return std::move(*bad);
    const auto& d = std::get<rapidjson::Document>(doc);
    if (auto bad = unknown_member(d, {"comment"}, req))
      return std::move(*bad);
    std::optional<reply> bad;
    vote.comment = string_member(d, "comment", false, bad, req);
    if (bad)
      return std::move(*bad);
  }
  vote.by = req.who.name;
  vote.role = to_string(req.who.role);
  vote.approve = true;
  vote.at = ctx.clock.now_us();
  return candidate_reply(gate.promote(id, std::move(vote)), 200, req);
}

reply rollback(server_context& ctx, actors::candidate_service& gate, const request& req) {
  auto kind = evolve::artefact::knowledge_base;
  if (!req.body.empty()) {
    auto doc = request_object(ctx, req, R"({"kind"?})");
    if (auto* bad = std::get_if<reply>(&doc))
      return std::move(*bad);
    const auto& d = std::get<rapidjson::Document>(doc);
    if (auto bad = unknown_member(d, {"kind"}, req))
      return std::move(*bad);
    std::optional<reply> bad;
    kind = kind_member(d, bad, req);
    if (bad)
      return std::move(*bad);
  }
  auto c = gate.rollback(kind, req.who.name);
  if (!c)
    return problem(c.error(), req);
  return json_reply(200, json::object("candidate", json::raw_text{evolve::to_json(*c)}, "current",
                                      gate.current(kind)));
}

} // namespace

void add_candidate_routes(router& r, server_context& ctx) {
  auto* c = &ctx;
  auto with = [c](auto fn) {
    return [c, fn](const request& q, responder s) {
      if (c->candidates == nullptr)
        return s.send(problem(503, "unavailable", "this node has no evolution gate", q));
      s.send(fn(*c, *c->candidates, q));
    };
  };
  r.add("POST", "/v1/candidates", access::operator_, with(propose));
  r.add("GET", "/v1/candidates", access::viewer,
        with([](server_context&, actors::candidate_service& g, const request& q) {
          return list(g, q);
        }));
  r.add("GET", "/v1/candidates/{id}", access::viewer,
        with([](server_context&, actors::candidate_service& g, const request& q) {
          const auto& id = q.params.at("id");
          if (auto bad = check_candidate_id(q, id))
            return std::move(*bad);
          return candidate_reply(g.get(id), 200, q);
        }));
  r.add("POST", "/v1/candidates/{id}/promote", access::approver, with(promote));
  r.add("POST", "/v1/candidates/rollback", access::approver, with(rollback));
}

} // namespace sreh::net
