// Long-term memory (docs/memory.md): GET /v1/memory (search), POST /v1/memory, GET, PUT and
// DELETE /v1/memory/{id}, GET /v1/memory/{id}/versions and POST /v1/memory/{id}/rollback.
// Viewers read, operators write; each change is the next version of its entry, in the audit
// chain with the caller as its author (actors/memory/memory_service.hpp).
#include "core/memory/memory.hpp"

#include <charconv>

#include "actors/memory/memory_service.hpp"
#include "core/base/id.hpp"
#include "core/memory/search.hpp"
#include "net/http/problem.hpp"
#include "net/http/routes/routes.hpp"

namespace sreh::net {

namespace {

reply no_memory(const request& req) {
  return problem(503, "unavailable", "this node has no long-term memory", req);
}

std::optional<reply> check_memory_id(const request& req, const std::string& id) {
  if (is_valid_id(id, "mem"))
    return std::nullopt;
  return problem(400, "invalid-argument",
                 "memory id '" + id + "' is malformed (expected mem_ followed by 26 characters)",
                 req);
}

/// `key=value[,key=value...]` into `out`; the problem naming the parameter when malformed.
std::optional<reply> read_label_pairs(const request& req, const char* name,
                                      std::map<std::string, std::string>& out) {
  const auto* v = req.param(name);
  if (v == nullptr || v->empty())
    return std::nullopt;
  std::string_view rest{*v};
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    const auto pair = rest.substr(0, comma);
    const auto eq = pair.find('=');
    if (eq == std::string_view::npos || eq == 0)
      return problem(400, "invalid-argument",
                     std::string{name} + ": expected key=value[,key=value...], got '" +
                       std::string{pair} + "'",
                     req);
    out[std::string{pair.substr(0, eq)}] = std::string{pair.substr(eq + 1)};
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
  }
  return std::nullopt;
}

/// The query of GET /v1/memory: q, label (a filter), near (ranking labels), entity, kind, limit.
std::variant<memory::query, reply> read_memory_query(const request& req) {
  memory::query q;
  if (const auto* t = req.param("q"))
    q.text = *t;
  if (auto bad = read_label_pairs(req, "label", q.filter))
    return std::move(*bad);
  if (auto bad = read_label_pairs(req, "near", q.labels))
    return std::move(*bad);
  if (const auto* e = req.param("entity"); e && !e->empty())
    q.entities.push_back(*e);
  if (const auto* k = req.param("kind"); k && !k->empty()) {
    q.kind = memory::parse_kind(*k);
    if (!q.kind)
      return problem(400, "invalid-argument",
                     "kind: '" + *k + "' is not one of postmortem, incident, note, runbook", req);
  }
  std::optional<reply> bad;
  if (auto n = read_limit(req, bad))
    q.limit = *n;
  if (bad)
    return std::move(*bad);
  if (auto err = memory::validate(q))
    return problem(err, req);
  return q;
}

std::string memory_body(const memory::entry& e) {
  return item_body("memory", e, [](json::writer& w, const auto& x) { memory::write_json(w, x); });
}

reply reply_entry(const expected<memory::entry>& e, int status, const request& req) {
  if (!e)
    return problem(e.error(), req);
  auto out = json_reply(status, memory_body(*e));
  if (status == 201)
    out.headers.emplace_back("Location", "/v1/memory/" + e->id);
  return out;
}

reply search_memory(actors::memory_service& m, const request& req) {
  auto q = read_memory_query(req);
  if (auto* bad = std::get_if<reply>(&q))
    return std::move(*bad);
  auto hits = m.search(std::get<memory::query>(q));
  if (!hits)
    return problem(hits.error(), req);
  return json_reply(200, list_body("memories", *hits, [](json::writer& w, const auto& h) {
                      memory::write_json(w, h);
                    }));
}

reply add_memory(server_context& ctx, actors::memory_service& m, const request& req) {
  auto doc = request_object(ctx, req, R"({"kind", "text", "labels"?, "entities"?})");
  if (auto* bad = std::get_if<reply>(&doc))
    return std::move(*bad);
  auto d = memory::read_draft(std::get<rapidjson::Document>(doc));
  if (!d)
    return problem(d.error(), req);
  return reply_entry(m.add(std::move(*d), req.who.name), 201, req);
}

reply edit_memory(server_context& ctx, actors::memory_service& m, const request& req) {
  const auto& id = req.params.at("id");
  if (auto bad = check_memory_id(req, id))
    return std::move(*bad);
  auto doc = request_object(ctx, req, R"({"text"?, "labels"?, "entities"?})");
  if (auto* bad = std::get_if<reply>(&doc))
    return std::move(*bad);
  auto p = memory::read_patch(std::get<rapidjson::Document>(doc));
  if (!p)
    return problem(p.error(), req);
  return reply_entry(m.edit(id, *p, req.who.name), 200, req);
}

reply roll_back_memory(server_context& ctx, actors::memory_service& m, const request& req) {
  const auto& id = req.params.at("id");
  if (auto bad = check_memory_id(req, id))
    return std::move(*bad);
  auto doc = request_object(ctx, req, R"({"version": N})");
  if (auto* bad = std::get_if<reply>(&doc))
    return std::move(*bad);
  const auto& body = std::get<rapidjson::Document>(doc);
  const auto* v = json::member(body, "version");
  if (v == nullptr || !v->IsInt64() || v->GetInt64() < 1 || body.MemberCount() != 1)
    return problem(400, "invalid-argument",
                   "the body must be {\"version\": N} with N a version of the entry (1 or more)",
                   req);
  return reply_entry(m.rollback(id, v->GetInt64(), req.who.name), 200, req);
}

reply memory_versions_reply(actors::memory_service& m, const request& req) {
  const auto& id = req.params.at("id");
  if (auto bad = check_memory_id(req, id))
    return std::move(*bad);
  auto vs = m.versions(id);
  if (!vs)
    return problem(vs.error(), req);
  return json_reply(200, list_body("versions", *vs, [](json::writer& w, const auto& e) {
                      memory::write_json(w, e);
                    }));
}

} // namespace

void add_memory_routes(router& r, server_context& ctx) {
  auto* c = &ctx;
  // Each handler answers 503 when the node has no memory (an eval or replay node).
  auto with = [c](auto fn) {
    return [c, fn](const request& q, responder s) {
      if (c->memory == nullptr)
        return s.send(no_memory(q));
      s.send(fn(*c, *c->memory, q));
    };
  };
  r.add("GET", "/v1/memory", access::viewer,
        with([](server_context&, actors::memory_service& m, const request& q) {
          return search_memory(m, q);
        }));
  r.add("POST", "/v1/memory", access::operator_, with(add_memory));
  r.add("GET", "/v1/memory/{id}", access::viewer,
        with([](server_context&, actors::memory_service& m, const request& q) {
          const auto& id = q.params.at("id");
          if (auto bad = check_memory_id(q, id))
            return std::move(*bad);
          return reply_entry(m.get(id), 200, q);
        }));
  r.add("PUT", "/v1/memory/{id}", access::operator_, with(edit_memory));
  r.add("DELETE", "/v1/memory/{id}", access::operator_,
        with([](server_context&, actors::memory_service& m, const request& q) {
          const auto& id = q.params.at("id");
          if (auto bad = check_memory_id(q, id))
            return std::move(*bad);
          return reply_entry(m.remove(id, q.who.name), 200, q);
        }));
  r.add("GET", "/v1/memory/{id}/versions", access::viewer,
        with([](server_context&, actors::memory_service& m, const request& q) {
          return memory_versions_reply(m, q);
        }));
  r.add("POST", "/v1/memory/{id}/rollback", access::operator_, with(roll_back_memory));
}

} // namespace sreh::net
