// REST handlers for goals and runs. No Beast here: handlers see `request` and answer through
// `responder`. Kernel callbacks arrive on actor threads; they hop onto the connection's strand
// (responder::post) before touching the store, which may block.
#include <fmt/format.h>

#include <charconv>

#include "actors/evolve/candidate_service.hpp"
#include "actors/postmortem/postmortem_service.hpp"
#include "core/base/id.hpp"
#include "core/base/json.hpp"
#include "core/conversation/follow_up.hpp"
#include "core/conversation/steering.hpp"
#include "core/evolve/candidate.hpp"
#include "core/journal/compare.hpp"
#include "core/journal/fork.hpp"
#include "core/model/fork_origin.hpp"
#include "core/model/goal.hpp"
#include "core/model/json_codecs.hpp"
#include "net/http/problem.hpp"
#include "net/http/routes/routes.hpp"

namespace sreh::net {

namespace {

/// Validates the `{id}` path parameter; a problem reply when malformed.
std::optional<reply> check_run_id(const request& req, const std::string& id) {
  if (is_valid_id(id, "run"))
    return std::nullopt;
  return problem(400, "invalid-argument",
                 "run id '" + id + "' is malformed (expected run_ followed by 26 characters)", req);
}

/// Loads a run for a reply: either the run or the problem to send.
std::variant<run, reply> load_run(server_context& ctx, const request& req, const std::string& id) {
  auto r = ctx.store.get_run(id);
  if (!r)
    return problem(r.error(), req);
  if (!*r)
    return problem(404, "not-found", "run " + id + " not found", req);
  return std::move(**r);
}

// -- POST /v1/goals ----------------------------------------------------------------------------

void submit_goal(server_context& ctx, const request& req, responder res) {
  std::string key;
  if (auto bad = read_idempotency_key(req, key))
    return res.send(std::move(*bad));
  if (auto doc = json::parse(req.body, static_cast<int>(ctx.cfg.limits.max_json_depth)); !doc)
    return res.send(problem(doc.error(), req));
  auto goal = parse_goal_request(req.body, ctx.cfg.budget);
  if (!goal)
    return res.send(problem(goal.error(), req));
  goal->idempotency_key = key;
  goal->submitter = req.who.name;
  submit_run(ctx, req, std::move(res), std::move(*goal));
}

} // namespace

void submit_run(server_context& ctx, const request& req, responder res, goal_request g) {
  auto text = g.goal;
  auto spec = g.spec;
  auto* c = &ctx;
  ctx.kernel.submit(std::move(g), [c, req, res, text, spec](expected<actors::submit_reply> r) {
    res.post([c, req, res, text, spec, r = std::move(r)] {
      if (!r)
        return res.send(problem(r.error(), req));
      auto loaded = load_run(*c, req, r->run_id);
      if (auto* p = std::get_if<reply>(&loaded))
        return res.send(std::move(*p));
      const auto& run = std::get<sreh::run>(loaded);
      // The kernel pins today's versions into a goal run's spec: a retry is compared without.
      if (!r->created && (run.goal != text || evolve::unpinned(run.spec) != evolve::unpinned(spec)))
        return res.send(
          problem(422, "idempotency-key-reuse",
                  fmt::format("Idempotency-Key reused with a different {} (it names run {})",
                              run.kind == "flow" ? "flow or inputs" : "goal", run.id),
                  req));
      auto out = json_reply(r->created ? 201 : 200, envelope("run", run));
      if (r->created)
        out.headers.emplace_back("Location", "/v1/runs/" + run.id);
      res.send(std::move(out));
    });
  });
}

namespace {

// -- GET /v1/runs ------------------------------------------------------------------------------

reply list_runs(server_context& ctx, const request& req) {
  persistence::run_filter f;
  if (const auto* s = req.param("state"); s && !s->empty()) {
    f.state = parse_run_state(*s);
    if (!f.state)
      return problem(400, "invalid-argument",
                     "state: '" + *s +
                       "' is not one of pending, running, waiting, succeeded, failed, cancelled",
                     req);
  }
  std::optional<reply> bad;
  if (auto n = read_limit(req, bad))
    f.limit = *n;
  if (bad)
    return std::move(*bad);
  if (const auto* cur = req.param("cursor"); cur && !cur->empty()) {
    if (!is_valid_id(*cur, "run"))
      return problem(400, "invalid-argument", "cursor: '" + *cur + "' is not a run id", req);
    f.before_id = *cur;
  }
  auto page = ctx.store.list_runs(f);
  if (!page)
    return problem(page.error(), req);
  return json_reply(200, page_body("runs", page->runs, page->next_cursor));
}

// -- GET /v1/runs/{id}, GET /v1/runs/{id}/steps --------------------------------------------------

/// The run that the route's {id} names, or the problem to reply with.
std::variant<run, reply> find_run(server_context& ctx, const request& req) {
  const auto& id = req.params.at("id");
  if (auto bad = check_run_id(req, id))
    return std::move(*bad);
  return load_run(ctx, req, id);
}

/// The run's wire shape with the constraints and the pause its messages set
/// (docs/conversation.md).
reply get_run(server_context& ctx, const request& req) {
  auto loaded = find_run(ctx, req);
  if (auto* p = std::get_if<reply>(&loaded))
    return std::move(*p);
  const auto& r = std::get<run>(loaded);
  auto steps = ctx.store.get_steps(r.id);
  if (!steps)
    return problem(steps.error(), req);
  auto doc = json::parse_object(json::to_json(r));
  auto constraints =
    json::parse(conversation::constraints_json(conversation::constraints_of(*steps)));
  auto paused = json::parse(
    conversation::pause_json(is_terminal(r.state) ? std::nullopt : conversation::pause_of(*steps)));
  if (!doc || !constraints || !paused)
    return problem({errc::internal, "run " + r.id + ": its wire shape does not read back"}, req);
  rapidjson::Value v;
  v.CopyFrom(*constraints, doc->GetAllocator());
  doc->AddMember("constraints", v, doc->GetAllocator());
  v.CopyFrom(*paused, doc->GetAllocator());
  doc->AddMember("paused", v, doc->GetAllocator());
  return json_reply(200, json::stringify(*doc));
}

reply get_steps(server_context& ctx, const request& req) {
  const auto& id = req.params.at("id");
  auto loaded = find_run(ctx, req);
  if (auto* p = std::get_if<reply>(&loaded))
    return std::move(*p);
  auto steps = ctx.store.get_steps(id);
  if (!steps)
    return problem(steps.error(), req);
  rapidjson::StringBuffer buf;
  json::writer w(buf);
  w.StartObject();
  w.Key("run_id");
  w.String(id.c_str(), static_cast<rapidjson::SizeType>(id.size()));
  w.Key("steps");
  w.StartArray();
  for (const auto& s : *steps)
    json::write(w, s);
  w.EndArray();
  w.EndObject();
  return json_reply(200, {buf.GetString(), buf.GetSize()});
}

// -- POST /v1/runs/{id}/cancel -----------------------------------------------------------------

void cancel_run(server_context& ctx, const request& req, responder res) {
  const auto& id = req.params.at("id");
  if (auto bad = check_run_id(req, id))
    return res.send(std::move(*bad));
  auto* c = &ctx;
  ctx.kernel.cancel(id, req.who.name, [c, req, res, id](expected<run_state> r) {
    res.post([c, req, res, id, r = std::move(r)] {
      if (!r)
        return res.send(problem(r.error(), req));
      auto loaded = load_run(*c, req, id);
      if (auto* p = std::get_if<reply>(&loaded))
        return res.send(std::move(*p));
      res.send(json_reply(200, envelope("run", std::get<run>(loaded))));
    });
  });
}

// -- POST /v1/runs/{id}/follow-up (docs/conversation.md, "Follow-ups") ----------------------------

/// A new run that starts from what the ended run `{id}` concluded and on which evidence; the
/// parent is untouched. The body is a goal's (`goal`, `labels`, `budget`); without `labels` the
/// follow-up has the parent's.
void follow_up_run(server_context& ctx, const request& req, responder res) {
  std::string key;
  if (auto bad = read_idempotency_key(req, key))
    return res.send(std::move(*bad));
  auto loaded = find_run(ctx, req);
  if (auto* p = std::get_if<reply>(&loaded))
    return res.send(std::move(*p));
  const auto& parent = std::get<run>(loaded);
  auto doc = json::parse(req.body, static_cast<int>(ctx.cfg.limits.max_json_depth));
  if (!doc)
    return res.send(problem(doc.error(), req));
  auto goal = parse_goal_request(req.body, ctx.cfg.budget);
  if (!goal)
    return res.send(problem(goal.error(), req));
  if (!is_terminal(parent.state))
    return res.send(problem(
      409, "conflict",
      fmt::format("run {} is still {}: a follow-up starts from what it concluded, once it has "
                  "ended (to steer it now, POST /v1/runs/{}/messages)",
                  parent.id, to_string(parent.state), parent.id),
      req));
  if (ctx.postmortems == nullptr)
    return res.send(problem(503, "unavailable", "this node writes no postmortems", req));
  auto account = ctx.postmortems->of_run(parent.id);
  if (!account)
    return res.send(problem(account.error(), req));
  if (json::member(*doc, "labels") == nullptr)
    goal->labels = parent.labels;
  goal->spec = conversation::follow_up_spec(parent, *account);
  goal->idempotency_key = key;
  goal->submitter = req.who.name;
  submit_run(ctx, req, std::move(res), std::move(*goal));
}

// -- POST /v1/runs/{id}/fork, GET /v1/runs/{id}/compare (docs/fork.md) -------------------------

void fork_run(server_context& ctx, const request& req, responder res) {
  const auto& id = req.params.at("id");
  if (auto bad = check_run_id(req, id))
    return res.send(std::move(*bad));
  auto fr = journal::parse_fork_request(req.body, static_cast<int>(ctx.cfg.limits.max_json_depth));
  if (!fr)
    return res.send(problem(fr.error(), req));
  fr->run_id = id;
  fr->submitter = req.who.name;
  // A version the fork names is made available here first, whatever the candidate's state.
  for (const auto& [kind, version] : fr->versions) {
    if (version == evolve::config_version)
      continue;
    if (ctx.candidates == nullptr)
      return res.send(
        problem(400, "invalid-argument", "config.versions: this node has no evolution gate", req));
    if (auto err = ctx.candidates->make_available(version, kind))
      return res.send(problem(
        {err.code, fmt::format("config.versions.{}: {}", to_string(kind), err.message)}, req));
  }
  auto* c = &ctx;
  ctx.kernel.fork(std::move(*fr), [c, req, res](expected<actors::submit_reply> r) {
    res.post([c, req, res, r = std::move(r)] {
      if (!r)
        return res.send(problem(r.error(), req));
      auto loaded = load_run(*c, req, r->run_id);
      if (auto* p = std::get_if<reply>(&loaded))
        return res.send(std::move(*p));
      auto out = json_reply(201, envelope("run", std::get<run>(loaded)));
      out.headers.emplace_back("Location", "/v1/runs/" + r->run_id);
      res.send(std::move(out));
    });
  });
}

/// A run's journal beside another's: a fork beside the run it was forked from, or any run
/// beside `?with=RUN`.
reply compare_runs(server_context& ctx, const request& req) {
  auto loaded = find_run(ctx, req);
  if (auto* p = std::get_if<reply>(&loaded))
    return std::move(*p);
  const auto& fork = std::get<run>(loaded);
  auto origin = fork_origin_of(fork);
  std::string with;
  if (const auto* w = req.param("with"); w && !w->empty())
    with = *w;
  else if (origin)
    with = origin->run_id;
  else
    return problem(400, "invalid-argument",
                   fmt::format("run {} is not a fork: name the run to compare it with "
                               "(?with=RUN)",
                               fork.id),
                   req);
  if (auto bad = check_run_id(req, with))
    return std::move(*bad);
  auto other = load_run(ctx, req, with);
  if (auto* p = std::get_if<reply>(&other))
    return std::move(*p);
  const auto& original = std::get<run>(other);
  auto a = ctx.store.get_steps(original.id);
  if (!a)
    return problem(a.error(), req);
  auto b = ctx.store.get_steps(fork.id);
  if (!b)
    return problem(b.error(), req);
  const bool forked_here = origin && origin->run_id == original.id;
  journal::sides names{"original", "fork", "original run",
                       "fork",     false,  forked_here ? origin->step : 1};
  auto cmp = journal::compare(*a, *b, names);
  auto original_end = is_terminal(original.state) ? journal::end_of(original) : std::string{};
  auto fork_end = is_terminal(fork.state) ? journal::end_of(fork) : std::string{};
  return json_reply(
    200, object_body([&](json::writer& w) {
      json::fields(
        w, "run", fork.id, "original", original.id, "from_step",
        forked_here ? std::optional<std::int64_t>{origin->step} : std::nullopt, "edited_steps",
        json::raw_text{json::array(forked_here ? origin->edited : std::vector<std::int64_t>{},
                                   [](json::writer& o, std::int64_t n) { o.Int64(n); })},
        "state", to_string(fork.state), "first_divergence",
        cmp.first_divergence ? std::optional<std::int64_t>{cmp.first_divergence} : std::nullopt);
      write_items(w, "steps", cmp.steps, [](json::writer& o, const journal::step_comparison& s) {
        o.StartObject();
        json::fields(o, "n", s.n, "original", json::string_or_null(s.recorded), "fork",
                     json::string_or_null(s.replayed), "same", s.same);
        if (!s.same)
          json::field(o, "difference", s.difference);
        o.EndObject();
      });
      json::fields(w, "original_end", json::string_or_null(original_end), "fork_end",
                   json::string_or_null(fork_end), "same_end",
                   !fork_end.empty() && fork_end == original_end);
    }));
}

} // namespace

std::optional<reply> read_idempotency_key(const request& req, std::string& key) {
  const auto* k = req.header("idempotency-key");
  if (k == nullptr)
    return std::nullopt;
  bool ok = !k->empty() && k->size() <= 255;
  for (unsigned char c : *k)
    ok = ok && c >= 0x20 && c <= 0x7e;
  if (!ok)
    return problem(400, "invalid-argument",
                   "Idempotency-Key: must be 1..255 printable ASCII characters", req);
  key = *k;
  return std::nullopt;
}

std::variant<rapidjson::Document, reply> request_object(server_context& ctx, const request& req,
                                                        const char* shape) {
  if (req.body.empty())
    return problem(400, "invalid-argument", std::string{"a JSON body "} + shape + " is required",
                   req);
  auto doc = json::parse_object(req.body, static_cast<int>(ctx.cfg.limits.max_json_depth));
  if (!doc)
    return problem(doc.error(), req);
  return std::move(*doc);
}

std::optional<int> read_limit(const request& req, std::optional<reply>& bad) {
  const auto* l = req.param("limit");
  if (l == nullptr)
    return std::nullopt;
  int n = 0;
  auto [p, ec] = std::from_chars(l->data(), l->data() + l->size(), n);
  if (ec != std::errc{} || p != l->data() + l->size() || n < 1 || n > 500) {
    bad = problem(400, "invalid-argument", "limit: must be an integer from 1 to 500", req);
    return std::nullopt;
  }
  return n;
}

void add_run_routes(router& r, server_context& ctx) {
  auto* c = &ctx;
  r.add("POST", "/v1/goals", access::operator_,
        [c](const request& q, responder s) { submit_goal(*c, q, std::move(s)); });
  r.add("GET", "/v1/runs", access::viewer,
        [c](const request& q, responder s) { s.send(list_runs(*c, q)); });
  r.add("GET", "/v1/runs/{id}", access::viewer,
        [c](const request& q, responder s) { s.send(get_run(*c, q)); });
  r.add("GET", "/v1/runs/{id}/steps", access::viewer,
        [c](const request& q, responder s) { s.send(get_steps(*c, q)); });
  r.add("POST", "/v1/runs/{id}/cancel", access::operator_,
        [c](const request& q, responder s) { cancel_run(*c, q, std::move(s)); });
  r.add("POST", "/v1/runs/{id}/follow-up", access::operator_,
        [c](const request& q, responder s) { follow_up_run(*c, q, std::move(s)); });
  r.add("POST", "/v1/runs/{id}/fork", access::operator_,
        [c](const request& q, responder s) { fork_run(*c, q, std::move(s)); });
  r.add("GET", "/v1/runs/{id}/compare", access::viewer,
        [c](const request& q, responder s) { s.send(compare_runs(*c, q)); });
}

} // namespace sreh::net
