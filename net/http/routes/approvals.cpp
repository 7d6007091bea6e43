// REST handlers for approvals: list, get, decide. Reads go to the store; a decision goes to the
// kernel (which owns the approval's state and wakes the run), and its answer comes back on an
// actor thread, so the reply hops onto the connection's strand (responder::post).
#include <charconv>

#include "core/base/id.hpp"
#include "core/base/json.hpp"
#include "net/http/problem.hpp"
#include "net/http/routes/routes.hpp"

namespace sreh::net {

namespace {

constexpr std::size_t max_comment_bytes = 4096;

std::optional<reply> check_approval_id(const request& req, const std::string& id) {
  if (is_valid_id(id, "apr"))
    return std::nullopt;
  return problem(400, "invalid-argument",
                 "approval id '" + id + "' is malformed (expected apr_ followed by 26 characters)",
                 req);
}

std::variant<approval, reply> load_approval(server_context& ctx, const request& req,
                                            const std::string& id) {
  auto a = ctx.store.get_approval(id);
  if (!a)
    return problem(a.error(), req);
  if (!*a)
    return problem(404, "not-found", "approval " + id + " not found", req);
  return std::move(**a);
}

// -- GET /v1/approvals -------------------------------------------------------------------------

std::optional<reply> parse_filter(const request& req, persistence::approval_filter& f) {
  auto bad = [&req](const std::string& detail) {
    return std::optional<reply>(problem(400, "invalid-argument", detail, req));
  };
  if (const auto* s = req.param("state"); s && !s->empty()) {
    f.state = parse_approval_state(*s);
    if (!f.state)
      return bad("state: '" + *s + "' is not one of pending, approved, denied, expired");
  }
  if (const auto* run = req.param("run"); run && !run->empty()) {
    if (!is_valid_id(*run, "run"))
      return bad("run: '" + *run + "' is not a run id");
    f.run_id = *run;
  }
  if (const auto* role = req.param("role"); role && !role->empty()) {
    if (!parse_role(*role))
      return bad("role: '" + *role + "' is not one of viewer, operator, approver, admin");
    f.role = *role;
  }
  std::optional<reply> bad_limit;
  if (auto n = read_limit(req, bad_limit))
    f.limit = *n;
  if (bad_limit)
    return bad_limit;
  if (const auto* cur = req.param("cursor"); cur && !cur->empty()) {
    if (!is_valid_id(*cur, "apr"))
      return bad("cursor: '" + *cur + "' is not an approval id");
    f.before_id = *cur;
  }
  return std::nullopt;
}

reply list_approvals(server_context& ctx, const request& req) {
  persistence::approval_filter f;
  if (auto bad = parse_filter(req, f))
    return std::move(*bad);
  auto page = ctx.store.list_approvals(f);
  if (!page)
    return problem(page.error(), req);
  return json_reply(200, page_body("approvals", page->approvals, page->next_cursor));
}

// -- GET /v1/approvals/{id} ----------------------------------------------------------------------

reply get_approval(server_context& ctx, const request& req) {
  const auto& id = req.params.at("id");
  if (auto bad = check_approval_id(req, id))
    return std::move(*bad);
  auto loaded = load_approval(ctx, req, id);
  if (auto* p = std::get_if<reply>(&loaded))
    return std::move(*p);
  return json_reply(200, envelope("approval", std::get<approval>(loaded)));
}

// -- POST /v1/approvals/{id}/decision ------------------------------------------------------------

struct decision_body {
  std::string decision;
  std::string comment;
};

std::variant<decision_body, reply> parse_decision(server_context& ctx, const request& req) {
  auto bad = [&req](const std::string& detail) {
    return problem(400, "invalid-argument", detail, req);
  };
  if (req.body.empty())
    return bad(
      "a JSON body {\"decision\": \"approve\"|\"deny\", \"comment\": \"...\"} is required");
  auto doc = json::parse_object(req.body, static_cast<int>(ctx.cfg.limits.max_json_depth));
  if (!doc)
    return problem(doc.error(), req);
  decision_body out;
  bool has_decision = false;
  for (const auto& m : doc->GetObject()) {
    std::string_view key(m.name.GetString(), m.name.GetStringLength());
    if (key == "decision" || key == "comment") {
      if (!m.value.IsString())
        return bad(std::string(key) + ": expected a string, got " + json::type_of(m.value));
      std::string v(m.value.GetString(), m.value.GetStringLength());
      if (key == "decision") {
        out.decision = std::move(v);
        has_decision = true;
      } else {
        if (v.size() > max_comment_bytes)
          return bad("comment: longer than " + std::to_string(max_comment_bytes) + " bytes");
        out.comment = std::move(v);
      }
    } else {
      return bad("unknown field '" + std::string(key) + "' (expected decision, comment)");
    }
  }
  if (!has_decision)
    return bad("decision: required (approve or deny)");
  return out;
}

/// approve → true, deny → false; for in_doubt approvals also happened / not_happened.
std::optional<bool> vote_of(const std::string& decision, approval_kind kind) {
  if (decision == "approve")
    return true;
  if (decision == "deny")
    return false;
  if (kind == approval_kind::in_doubt) {
    if (decision == "happened")
      return true;
    if (decision == "not_happened")
      return false;
  }
  return std::nullopt;
}

void decide(server_context& ctx, const request& req, responder res) {
  const auto& id = req.params.at("id");
  if (auto bad = check_approval_id(req, id))
    return res.send(std::move(*bad));
  auto body = parse_decision(ctx, req);
  if (auto* p = std::get_if<reply>(&body))
    return res.send(std::move(*p));
  auto& d = std::get<decision_body>(body);
  auto loaded = load_approval(ctx, req, id);
  if (auto* p = std::get_if<reply>(&loaded))
    return res.send(std::move(*p));
  const auto& a = std::get<approval>(loaded);
  auto approve = vote_of(d.decision, a.kind);
  if (!approve) {
    auto allowed =
      a.kind == approval_kind::in_doubt ? "approve, deny, happened, not_happened" : "approve, deny";
    return res.send(problem(400, "invalid-argument",
                            "decision: '" + d.decision + "' is not one of " + allowed, req));
  }
  approval_vote vote;
  vote.by = req.who.name;
  vote.role = to_string(req.who.role);
  vote.approve = *approve;
  vote.comment = std::move(d.comment);
  vote.at = ctx.clock.now_us();
  ctx.kernel.decide(id, std::move(vote), [req, res](expected<approval> r) {
    // Serialising does not block: answer from here, the responder hops onto the strand.
    if (!r)
      return res.send(problem(r.error(), req));
    res.send(json_reply(200, envelope("approval", *r)));
  });
}

} // namespace

void add_approval_routes(router& r, server_context& ctx) {
  auto* c = &ctx;
  r.add("GET", "/v1/approvals", access::viewer,
        [c](const request& q, responder s) { s.send(list_approvals(*c, q)); });
  r.add("GET", "/v1/approvals/{id}", access::viewer,
        [c](const request& q, responder s) { s.send(get_approval(*c, q)); });
  r.add("POST", "/v1/approvals/{id}/decision", access::approver,
        [c](const request& q, responder s) { decide(*c, q, std::move(s)); });
}

} // namespace sreh::net
