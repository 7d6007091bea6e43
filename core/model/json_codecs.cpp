// The wire shape of runs, steps and events (REST API, SSE, store checkpoints) and its decoders.
#include "core/model/json_codecs.hpp"

#include <fmt/format.h>

#include "core/base/json.hpp"
#include "core/base/json_object.hpp"
#include "core/model/fork_origin.hpp"
#include "core/model/json_fields.hpp"

namespace sreh::json {

using namespace detail;

namespace {

/// A flow run's pin without the flow's text: `"flow": {"name", "version", "inputs", "branch"?}`
/// (nothing for a goal run).
void write_flow_pin(writer& w, const std::string& spec) {
  auto doc = json::parse_object(spec);
  if (!doc || !doc->HasMember("flow") || !(*doc)["flow"].IsString())
    return;
  w.Key("flow");
  w.StartObject();
  w.Key("name"), w.String((*doc)["flow"].GetString());
  for (const char* key : {"version", "parallel", "branch"})
    if (auto m = doc->FindMember(key); m != doc->MemberEnd() && m->value.IsString())
      w.Key(key), w.String(m->value.GetString());
  if (auto m = doc->FindMember("inputs"); m != doc->MemberEnd() && m->value.IsObject())
    w.Key("inputs"), raw(w, stringify(m->value));
  w.EndObject();
}

/// `"versions": {"knowledge_base", "policy", "prompt", "model_route"}` ("config" or "cnd_..."):
/// what a goal run uses, as its spec pinned it when it began (core/evolve's artefacts, in the
/// order of evolve::all_artefacts; no pin is the config's version).
void write_versions(writer& w, const std::string& spec) {
  auto doc = spec.find("\"versions\"") != std::string::npos
               ? json::parse_object(spec)
               : expected<rapidjson::Document>{sreh::error{errc::not_found, ""}};
  const auto* versions = doc ? json::member(*doc, "versions") : nullptr;
  w.Key("versions");
  w.StartObject();
  for (const char* kind : {"knowledge_base", "policy", "prompt", "model_route"}) {
    const auto* v = versions && versions->IsObject() ? json::member(*versions, kind) : nullptr;
    w.Key(kind);
    if (v != nullptr && v->IsString())
      str(w, {v->GetString(), v->GetStringLength()});
    else
      w.String("config");
  }
  w.EndObject();
}

} // namespace

void write(writer& w, const run& r) {
  w.StartObject();
  w.Key("id"), str(w, r.id);
  w.Key("goal"), str(w, r.goal);
  w.Key("state"), w.String(to_string(r.state));
  w.Key("waiting_for");
  if (r.waiting_for == wait_reason::none)
    w.Null();
  else
    w.String(to_string(r.waiting_for));
  w.Key("submitter"), str(w, r.submitter);
  w.Key("idempotency_key"), str_or_null(w, r.idempotency_key);
  w.Key("node_id"), str(w, r.node_id);
  w.Key("created_at"), timestamp(w, r.created_at);
  w.Key("updated_at"), timestamp(w, r.updated_at);
  w.Key("steps"), w.Int64(r.steps);
  w.Key("tokens"), w.Int64(r.tokens);
  if (auto cost = cost_of_checkpoint(r.checkpoint); cost > 0) // a run with priced model calls
    w.Key("cost"), w.Double(cost);
  w.Key("budget");
  w.StartObject();
  w.Key("max_steps"), w.Int64(r.budget.max_steps);
  w.Key("max_tokens"), w.Int64(r.budget.max_tokens);
  w.Key("deadline"), timestamp(w, r.budget.deadline_us);
  w.Key("max_result_bytes"), w.Int64(r.budget.max_result_bytes);
  if (r.budget.max_cost > 0)
    w.Key("max_cost"), w.Double(r.budget.max_cost);
  w.EndObject();
  w.Key("checkpoint"), raw(w, r.checkpoint);
  w.Key("conclusion"), str_or_null(w, r.conclusion);
  w.Key("error"), str_or_null(w, r.error);
  w.Key("outcome"), str_or_null(w, r.outcome);
  w.Key("quality"), raw(w, r.quality);
  w.Key("labels"), raw(w, r.labels);
  w.Key("kind"), str(w, r.kind);
  w.Key("parent"), str_or_null(w, r.parent);
  write_flow_pin(w, r.spec);
  if (auto o = fork_origin_of(r)) {
    w.Key("forked_from"), str(w, o->run_id);
    w.Key("fork");
    w.StartObject();
    w.Key("from_step"), w.Int64(o->step);
    w.Key("edited_steps");
    w.StartArray();
    for (auto n : o->edited)
      w.Int64(n);
    w.EndArray();
    w.Key("policy"), w.String(o->policy.empty() ? "node" : "own");
    w.EndObject();
  }
  if (r.kind == "goal")
    write_versions(w, r.spec);
  // What the run started with besides its goal: a Work's story (core/works/conversation.hpp)
  // or the run it follows up (core/conversation/follow_up.hpp).
  if (r.kind == "goal" && r.spec.find("\"context\"") != std::string::npos)
    if (auto doc = json::parse_object(r.spec))
      for (const char* key : {"context", "follow_up_of"})
        if (const auto* c = json::member(*doc, key); c != nullptr && c->IsString())
          w.Key(key), str(w, {c->GetString(), c->GetStringLength()});
  w.EndObject();
}

void write(writer& w, const step& s) {
  w.StartObject();
  w.Key("run_id"), str(w, s.run_id);
  w.Key("n"), w.Int64(s.n);
  w.Key("kind"), w.String(to_string(s.kind));
  w.Key("state"), w.String(to_string(s.state));
  w.Key("tool"), str_or_null(w, s.tool);
  w.Key("args"), raw(w, s.args);
  w.Key("idempotency_key"), str(w, s.idempotency_key);
  w.Key("decision"), raw(w, s.decision);
  w.Key("result"), raw(w, s.result);
  w.Key("error"), str_or_null(w, s.error);
  w.Key("result_truncated"), w.Bool(s.result_truncated);
  w.Key("started_at"), timestamp(w, s.started_at);
  w.Key("finished_at"), timestamp(w, s.finished_at);
  w.Key("executed_at"), timestamp(w, s.executed_at);
  w.Key("attempts"), w.Int64(s.attempts);
  w.EndObject();
}

void write(writer& w, const event& e) {
  w.StartObject();
  w.Key("seq"), w.Int64(e.seq);
  w.Key("id"), str(w, e.id);
  w.Key("run_id"), str(w, e.run_id);
  w.Key("run_seq"), w.Int64(e.run_seq);
  w.Key("kind"), str(w, e.kind);
  w.Key("at"), timestamp(w, e.at);
  w.Key("data"), raw(w, e.data);
  w.EndObject();
}

std::string to_json(const run& r) {
  return serialize(r);
}

std::string to_json(const step& s) {
  return serialize(s);
}

std::string to_json(const event& e) {
  return serialize(e);
}

expected<run> run_from_json(std::string_view text) {
  auto doc = parse_object(text);
  if (!doc)
    return doc.error();
  run r;
  detail::fields f{*doc, ""};
  f.text("id", r.id);
  f.text("goal", r.goal);
  f.enumeration("state", r.state, parse_run_state, std::optional<run_state>{});
  f.enumeration("waiting_for", r.waiting_for, parse_wait_reason, std::optional{wait_reason::none});
  f.text("submitter", r.submitter);
  f.text("idempotency_key", r.idempotency_key, true);
  f.text("node_id", r.node_id);
  f.time("created_at", r.created_at);
  f.time("updated_at", r.updated_at);
  f.integer("steps", r.steps);
  f.integer("tokens", r.tokens);
  if (auto* b = f.object("budget")) {
    detail::fields fb{*b, "budget."};
    fb.integer("max_steps", r.budget.max_steps);
    fb.integer("max_tokens", r.budget.max_tokens);
    fb.time("deadline", r.budget.deadline_us);
    fb.integer("max_result_bytes", r.budget.max_result_bytes);
    fb.number("max_cost", r.budget.max_cost);
    if (fb.err())
      return fb.err();
  }
  f.raw_text("checkpoint", r.checkpoint);
  f.text("conclusion", r.conclusion, true);
  f.text("error", r.error, true);
  f.text("outcome", r.outcome, true);
  f.raw_text("quality", r.quality, true);
  f.raw_text("labels", r.labels);
  f.text("kind", r.kind);
  f.text("parent", r.parent, true);
  if (f.err())
    return f.err();
  return r;
}

expected<step> step_from_json(std::string_view text) {
  auto doc = parse_object(text);
  if (!doc)
    return doc.error();
  step s;
  detail::fields f{*doc, ""};
  f.text("run_id", s.run_id);
  f.integer("n", s.n);
  f.enumeration("kind", s.kind, parse_step_kind, std::optional<step_kind>{});
  f.enumeration("state", s.state, parse_step_state, std::optional<step_state>{});
  f.text("tool", s.tool, true);
  f.raw_text("args", s.args);
  f.text("idempotency_key", s.idempotency_key);
  f.raw_text("decision", s.decision);
  f.raw_text("result", s.result, true);
  f.text("error", s.error, true);
  f.boolean("result_truncated", s.result_truncated);
  f.time("started_at", s.started_at);
  f.time("finished_at", s.finished_at);
  f.time("executed_at", s.executed_at);
  f.integer("attempts", s.attempts);
  if (f.err())
    return f.err();
  return s;
}

expected<event> event_from_json(std::string_view text) {
  auto doc = parse_object(text);
  if (!doc)
    return doc.error();
  event e;
  detail::fields f{*doc, ""};
  f.integer("seq", e.seq);
  f.text("id", e.id);
  f.text("run_id", e.run_id);
  f.integer("run_seq", e.run_seq);
  f.text("kind", e.kind);
  f.time("at", e.at);
  f.raw_text("data", e.data);
  if (f.err())
    return f.err();
  return e;
}

} // namespace sreh::json

namespace sreh {

double cost_of_checkpoint(std::string_view checkpoint) {
  if (checkpoint.find("\"cost\"") == std::string_view::npos)
    return 0; // the common case: no model calls, nothing to parse
  auto doc = json::parse(checkpoint);
  if (!doc || !doc->IsObject())
    return 0;
  auto m = doc->FindMember("cost");
  return m != doc->MemberEnd() && m->value.IsNumber() ? m->value.GetDouble() : 0;
}

std::string checkpoint_of(std::int64_t run_seq, double cost) {
  return json::build([&](json::writer& w) {
    w.StartObject();
    json::field(w, "run_seq", run_seq);
    if (cost > 0)
      json::field(w, "cost", cost);
    w.EndObject();
  });
}

std::int64_t run_seq_of_checkpoint(std::string_view checkpoint) {
  auto doc = json::parse(checkpoint);
  return doc ? json::int_of(*doc, "run_seq").value_or(0) : 0;
}

} // namespace sreh
