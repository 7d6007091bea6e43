// The SSE routes: validation before the stream starts (the streaming itself is sse_session).
#include <charconv>

#include "core/base/id.hpp"
#include "core/model/run.hpp"
#include "net/http/problem.hpp"
#include "net/http/routes/routes.hpp"

namespace sreh::net {

bool is_terminal_kind(const std::string& kind) {
  return kind == "run.succeeded" || kind == "run.failed" || kind == "run.cancelled";
}

namespace {

/// Fills `after_seq` from the Last-Event-ID header (preferred) or the `last_event_id` query
/// parameter; a problem when malformed.
std::optional<reply> resume_point(const request& req, sse_spec& spec) {
  const auto* v = req.header("last-event-id");
  const char* name = "Last-Event-ID";
  if (!v) {
    v = req.param("last_event_id");
    name = "last_event_id";
  }
  if (!v)
    return std::nullopt;
  auto seq = parse_last_event_id(*v);
  if (!seq)
    return problem(400, "invalid-argument",
                   std::string(name) + ": '" + *v + "' is not a non-negative integer", req);
  spec.after_seq = *seq;
  return std::nullopt;
}

std::variant<reply, sse_spec> run_events(server_context& ctx, const request& req) {
  const auto& id = req.params.at("id");
  if (!is_valid_id(id, "run"))
    return problem(400, "invalid-argument", "run id '" + id + "' is malformed", req);
  sse_spec spec;
  spec.run_id = id;
  spec.finish_on_terminal = true;
  if (auto bad = resume_point(req, spec))
    return std::move(*bad);
  if (const auto* k = req.param("kind"))
    spec.kind_prefix = *k;
  auto r = ctx.store.get_run(id);
  if (!r)
    return problem(r.error(), req);
  if (!*r)
    return problem(404, "not-found", "run " + id + " not found", req);
  return spec;
}

/// A Work's timeline, then live; it stays open (a resolved Work may be reopened).
std::variant<reply, sse_spec> work_events(server_context& ctx, const request& req) {
  const auto& id = req.params.at("id");
  if (!is_valid_id(id, "wrk"))
    return problem(400, "invalid-argument", "work id '" + id + "' is malformed", req);
  sse_spec spec;
  spec.run_id = id; // a Work's events carry its id where a run's carry the run's
  if (auto bad = resume_point(req, spec))
    return std::move(*bad);
  if (const auto* k = req.param("kind"))
    spec.kind_prefix = *k;
  auto w = ctx.store.get_work(id);
  if (!w)
    return problem(w.error(), req);
  if (!*w)
    return problem(404, "not-found", "work " + id + " not found", req);
  return spec;
}

std::variant<reply, sse_spec> all_events(const request& req) {
  sse_spec spec;
  if (const auto* run = req.param("run"); run && !run->empty()) {
    if (!is_valid_id(*run, "run") && !is_valid_id(*run, "wrk"))
      return problem(400, "invalid-argument", "run: '" + *run + "' is not a run or work id", req);
    spec.run_id = *run;
  }
  if (const auto* k = req.param("kind"))
    spec.kind_prefix = *k;
  if (auto bad = resume_point(req, spec))
    return std::move(*bad);
  return spec;
}

} // namespace

void add_event_routes(router& r, server_context& ctx) {
  auto* c = &ctx;
  r.add_sse("/v1/runs/{id}/events", access::viewer,
            [c](const request& q) { return run_events(*c, q); });
  r.add_sse("/v1/works/{id}/events", access::viewer,
            [c](const request& q) { return work_events(*c, q); });
  r.add_sse("/v1/events", access::viewer, [](const request& q) { return all_events(q); });
}

} // namespace sreh::net
