// REST handlers for Works and world state. Reads go to the store (work_store, world_store); a
// new Work and every command go to the orchestrator (works_api), whose callbacks hop back onto
// the connection's strand before touching the store.

#include <fmt/format.h>

#include "core/base/id.hpp"
#include "core/base/json.hpp"
#include "core/works/lifecycle.hpp"
#include "net/http/problem.hpp"
#include "net/http/routes/routes.hpp"

namespace sreh::net {

namespace {

constexpr std::size_t max_text_bytes = 4096;

void put_or_null(json::writer& w, const char* key, std::string_view v) {
  w.Key(key);
  if (v.empty())
    w.Null();
  else
    w.String(v.data(), static_cast<rapidjson::SizeType>(v.size()));
}

void put_time(json::writer& w, const char* key, timestamp_us t) {
  w.Key(key);
  json::timestamp(w, t);
}

const works::work_template* template_of(const server_context& ctx, const works::work& x) {
  for (const auto& t : ctx.cfg.works.loaded)
    if (t.name == x.template_name)
      return &t;
  return nullptr;
}

/// A Work's SLA clocks at `now` (none without its template).
void write_sla(json::writer& w, const works::work_template* t, const works::work& x,
               timestamp_us now) {
  w.Key("sla");
  w.StartArray();
  if (t != nullptr)
    for (const auto& c : works::sla_clocks(t->sla, x.marks, now)) {
      w.StartObject();
      put(w, "clock", works::to_string(c.clock));
      put_time(w, "due_at", c.due_at);
      put_time(w, "stopped_at", c.stopped_at);
      w.Key("breached"), w.Bool(c.breached);
      w.EndObject();
    }
  w.EndArray();
}

/// A Work's runs: their ids, or with `detail` their state and goal.
void write_runs(json::writer& w, server_context& ctx, const works::work& x, bool detail) {
  w.Key("runs");
  w.StartArray();
  for (const auto& id : x.runs) {
    if (!detail) {
      w.String(id.c_str(), static_cast<rapidjson::SizeType>(id.size()));
      continue;
    }
    w.StartObject();
    put(w, "id", id);
    if (auto r = ctx.store.get_run(id); r && *r) {
      put(w, "state", to_string((*r)->state));
      put(w, "goal", (*r)->goal);
      w.Key("steps"), w.Int64((*r)->steps);
      put_or_null(w, "outcome", (*r)->outcome);
      put_or_null(w, "conclusion", (*r)->conclusion);
      put_or_null(w, "error", (*r)->error);
    }
    w.EndObject();
  }
  w.EndArray();
}

/// A Work's timeline: its events.
void write_timeline(json::writer& w, server_context& ctx, const works::work& x) {
  w.Key("timeline");
  w.StartArray();
  if (auto evs = persistence::timeline_of(ctx.store, x.id))
    for (const auto& e : *evs) {
      w.StartObject();
      w.Key("seq"), w.Int64(e.run_seq);
      put(w, "kind", e.kind);
      put_time(w, "at", e.at);
      w.Key("data"), json::raw(w, e.data);
      w.EndObject();
    }
  w.EndArray();
}

/// A Work in its wire shape. `detail` adds its runs (with their state and goal), its timeline
/// and its SLA clocks.
void write_work(json::writer& w, server_context& ctx, const works::work& x, bool detail) {
  w.StartObject();
  put(w, "id", x.id);
  put(w, "template", x.template_name);
  put(w, "template_version", x.template_version);
  put(w, "kind", x.kind);
  put(w, "title", x.title);
  put_or_null(w, "severity", x.severity);
  put(w, "state", works::to_string(x.state));
  w.Key("fields"), json::raw(w, x.fields);
  w.Key("labels"), json::raw(w, x.labels);
  put(w, "creator", x.creator);
  put_or_null(w, "idempotency_key", x.idempotency_key);
  put(w, "node_id", x.node_id);
  put_time(w, "created_at", x.created_at);
  put_time(w, "updated_at", x.updated_at);
  put_time(w, "acknowledged_at", x.marks.acknowledged_at);
  put_time(w, "mitigated_at", x.marks.mitigated_at);
  put_time(w, "resolved_at", x.marks.resolved_at);
  put_or_null(w, "active_run", x.active_run);
  w.Key("queued"), w.Int64(x.queued);
  put_time(w, "criteria_hold_since", x.holds_since);
  put_time(w, "next_check", x.next_check);
  const auto* t = template_of(ctx, x);
  if (t != nullptr && t->done) {
    w.Key("done");
    w.StartObject();
    put(w, "condition", t->done->condition.text);
    w.Key("for_s"), w.Int64(t->done->for_s);
    w.EndObject();
  }
  write_sla(w, t, x, ctx.clock.now_us());
  write_runs(w, ctx, x, detail);
  if (detail)
    write_timeline(w, ctx, x);
  w.EndObject();
}

reply work_envelope(server_context& ctx, int status, const works::work& x) {
  rapidjson::StringBuffer buf;
  json::writer w(buf);
  w.StartObject();
  w.Key("work");
  write_work(w, ctx, x, true);
  w.EndObject();
  return json_reply(status, {buf.GetString(), buf.GetSize()});
}

std::optional<reply> check_work_id(const request& req, const std::string& id) {
  if (is_valid_id(id, "wrk"))
    return std::nullopt;
  return problem(400, "invalid-argument",
                 "work id '" + id + "' is malformed (expected wrk_ followed by 26 characters)",
                 req);
}

reply no_works(const request& req) {
  return problem(503, "unavailable", "this node runs no Works control plane", req);
}

// -- POST /v1/works ----------------------------------------------------------------------------

void create_work(server_context& ctx, const request& req, responder res) {
  if (ctx.works == nullptr)
    return res.send(no_works(req));
  auto bad = [&req](const std::string& detail) {
    return problem(400, "invalid-argument", detail, req);
  };
  actors::new_work w;
  if (auto b = read_idempotency_key(req, w.idempotency_key))
    return res.send(std::move(*b));
  if (req.body.empty())
    return res.send(bad("a JSON body {\"template\": NAME, \"fields\": {...}} is required"));
  auto doc = json::parse_object(req.body, static_cast<int>(ctx.cfg.limits.max_json_depth));
  if (!doc)
    return res.send(problem(doc.error(), req));
  bool has_template = false;
  for (const auto& m : doc->GetObject()) {
    std::string_view key(m.name.GetString(), m.name.GetStringLength());
    if (key == "template") {
      if (!m.value.IsString())
        return res.send(
          bad(std::string{"template: expected a string, got "} + json::type_of(m.value)));
      w.template_name.assign(m.value.GetString(), m.value.GetStringLength());
      has_template = true;
    } else if (key == "fields") {
      if (!m.value.IsObject())
        return res.send(
          bad(std::string{"fields: expected an object, got "} + json::type_of(m.value)));
      w.fields = json::stringify(m.value);
    } else {
      return res.send(bad("unknown field '" + std::string(key) + "' (expected template, fields)"));
    }
  }
  if (!has_template || w.template_name.empty())
    return res.send(bad("template: required (GET /v1/templates lists them)"));
  w.creator = req.who.name;
  auto name = w.template_name;
  auto* c = &ctx;
  ctx.works->create(std::move(w), [c, req, res, name](actors::work_reply r) {
    res.post([c, req, res, name, r = std::move(r)] {
      if (r.err)
        return res.send(problem(r.err, req));
      if (!r.created && r.w.template_name != name)
        return res.send(problem(
          422, "idempotency-key-reuse",
          "Idempotency-Key reused with another template (it names work " + r.w.id + ")", req));
      auto out = work_envelope(*c, r.created ? 201 : 200, r.w);
      if (r.created)
        out.headers.emplace_back("Location", "/v1/works/" + r.w.id);
      res.send(std::move(out));
    });
  });
}

// -- GET /v1/works -----------------------------------------------------------------------------

reply list_works(server_context& ctx, const request& req) {
  auto bad = [&req](const std::string& detail) {
    return problem(400, "invalid-argument", detail, req);
  };
  persistence::work_filter f;
  if (const auto* s = req.param("state"); s && !s->empty()) {
    f.state = works::parse_work_state(*s);
    if (!f.state)
      return bad("state: '" + *s +
                 "' is not one of open, acknowledged, mitigating, monitoring, resolved, "
                 "cancelled");
  }
  if (const auto* k = req.param("kind"))
    f.kind = *k;
  if (const auto* s = req.param("severity"))
    f.severity = *s;
  if (const auto* t = req.param("text"))
    f.text = *t;
  if (const auto* l = req.param("label"); l && !l->empty()) {
    auto eq = l->find('=');
    if (eq == std::string::npos || eq == 0)
      return bad("label: expected key=value, got '" + *l + "'");
    f.label_key = l->substr(0, eq);
    f.label_value = l->substr(eq + 1);
  }
  std::optional<reply> bad_limit;
  if (auto n = read_limit(req, bad_limit))
    f.limit = *n;
  if (bad_limit)
    return std::move(*bad_limit);
  if (const auto* cur = req.param("cursor"); cur && !cur->empty()) {
    if (!is_valid_id(*cur, "wrk"))
      return bad("cursor: '" + *cur + "' is not a work id");
    f.before_id = *cur;
  }
  auto page = ctx.store.list_works(f);
  if (!page)
    return problem(page.error(), req);
  rapidjson::StringBuffer buf;
  json::writer w(buf);
  w.StartObject();
  w.Key("works");
  w.StartArray();
  for (const auto& x : page->works)
    write_work(w, ctx, x, false);
  w.EndArray();
  put_or_null(w, "next_cursor", page->next_cursor);
  w.EndObject();
  return json_reply(200, {buf.GetString(), buf.GetSize()});
}

// -- GET /v1/works/{id} ------------------------------------------------------------------------

reply get_work(server_context& ctx, const request& req) {
  const auto& id = req.params.at("id");
  if (auto bad = check_work_id(req, id))
    return std::move(*bad);
  auto x = ctx.store.get_work(id);
  if (!x)
    return problem(x.error(), req);
  if (!*x)
    return problem(404, "not-found", "work " + id + " not found", req);
  return work_envelope(ctx, 200, **x);
}

// -- POST /v1/works/{id}/{command} ---------------------------------------------------------------

void command_work(server_context& ctx, const request& req, responder res) {
  if (ctx.works == nullptr)
    return res.send(no_works(req));
  const auto& id = req.params.at("id");
  if (auto bad = check_work_id(req, id))
    return res.send(std::move(*bad));
  const auto& name = req.params.at("command");
  auto c = works::parse_work_command(name);
  if (!c || *c == works::work_command::alerts) // alerts come from the receiver only
    return res.send(problem(
      404, "not-found",
      "no command '" + name + "' (expected ack, resolve, reopen, cancel, comment, trigger)", req));
  std::string text;
  if (!req.body.empty()) {
    auto doc = json::parse_object(req.body, static_cast<int>(ctx.cfg.limits.max_json_depth));
    if (!doc)
      return res.send(problem(doc.error(), req));
    for (const auto& m : doc->GetObject()) {
      std::string_view key(m.name.GetString(), m.name.GetStringLength());
      if (key != "text")
        return res.send(problem(400, "invalid-argument",
                                "unknown field '" + std::string(key) + "' (expected text)", req));
      if (!m.value.IsString())
        return res.send(
          problem(400, "invalid-argument",
                  std::string{"text: expected a string, got "} + json::type_of(m.value), req));
      text.assign(m.value.GetString(), m.value.GetStringLength());
      if (text.size() > max_text_bytes)
        return res.send(problem(400, "invalid-argument",
                                fmt::format("text: longer than {} bytes", max_text_bytes), req));
    }
  }
  auto* cx = &ctx;
  ctx.works->command(id, *c, req.who.name, std::move(text), [cx, req, res](actors::work_reply r) {
    res.post([cx, req, res, r = std::move(r)] {
      if (r.err)
        return res.send(problem(r.err, req));
      res.send(work_envelope(*cx, 200, r.w));
    });
  });
}

// -- GET /v1/world, GET /v1/world/entities/{id}
// ----------------------------------------------------

reply get_world(server_context& ctx, const request& req) {
  auto all = ctx.store.world_entities();
  if (!all)
    return problem(all.error(), req);
  rapidjson::StringBuffer buf;
  json::writer w(buf);
  w.StartObject();
  w.Key("entities");
  w.StartArray();
  for (const auto& e : *all)
    world::write_json(w, e, true);
  w.EndArray();
  w.Key("edges");
  w.StartArray();
  for (const auto& e : *all)
    for (const auto& d : e.depends_on) {
      w.StartObject();
      put(w, "from", e.id);
      put(w, "to", d);
      put(w, "kind", "depends_on");
      w.EndObject();
    }
  w.EndArray();
  w.EndObject();
  return json_reply(200, {buf.GetString(), buf.GetSize()});
}

reply get_entity(server_context& ctx, const request& req) {
  const auto& id = req.params.at("id");
  auto e = ctx.store.world_entity(id);
  if (!e)
    return problem(e.error(), req);
  if (!*e)
    return problem(404, "not-found", "world state has no entity '" + id + "'", req);
  int limit = 100;
  std::optional<reply> bad_limit;
  if (auto n = read_limit(req, bad_limit))
    limit = *n;
  if (bad_limit)
    return std::move(*bad_limit);
  auto history = ctx.store.entity_history(id, limit);
  if (!history)
    return problem(history.error(), req);
  rapidjson::StringBuffer buf;
  json::writer w(buf);
  w.StartObject();
  w.Key("entity");
  world::write_json(w, **e, true);
  w.Key("history");
  w.StartArray();
  for (const auto& v : *history)
    world::write_json(w, v, true);
  w.EndArray();
  w.EndObject();
  return json_reply(200, {buf.GetString(), buf.GetSize()});
}

} // namespace

void add_work_routes(router& r, server_context& ctx) {
  auto* c = &ctx;
  r.add("POST", "/v1/works", access::operator_,
        [c](const request& q, responder s) { create_work(*c, q, std::move(s)); });
  r.add("GET", "/v1/works", access::viewer,
        [c](const request& q, responder s) { s.send(list_works(*c, q)); });
  r.add("GET", "/v1/works/{id}", access::viewer,
        [c](const request& q, responder s) { s.send(get_work(*c, q)); });
  r.add("POST", "/v1/works/{id}/{command}", access::operator_,
        [c](const request& q, responder s) { command_work(*c, q, std::move(s)); });
  r.add("GET", "/v1/world", access::viewer,
        [c](const request& q, responder s) { s.send(get_world(*c, q)); });
  r.add("GET", "/v1/world/entities/{id}", access::viewer,
        [c](const request& q, responder s) { s.send(get_entity(*c, q)); });
}

} // namespace sreh::net
