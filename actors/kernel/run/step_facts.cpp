#include "actors/kernel/run/step_facts.hpp"

#include <algorithm>

#include "core/base/json.hpp"

namespace sreh::actors {

namespace {

std::optional<flow_tag> flow_of(const rapidjson::Value* detail) {
  const auto* f = detail ? json::member(*detail, "flow") : nullptr;
  if (f == nullptr || !f->IsObject())
    return std::nullopt;
  flow_tag t;
  t.step = json::string_or(*f, "step");
  t.phase = flows::parse_phase(json::string_or(*f, "phase")).value_or(flows::phase::run);
  t.attempt = static_cast<int>(json::int_of(*f, "attempt").value_or(1));
  t.timeout_ms = json::int_of(*f, "timeout_ms").value_or(0);
  return t;
}

/// False when `decision` cannot hold a fact of its own: none of their keys is in its text. Most
/// tool steps' decisions are a thought and a policy verdict, and the run reads the facts of
/// every tool step it executes: this spares it parsing them (a key's name is never escaped by
/// the writers of decisions; a false "may" only costs the parse).
bool may_hold_facts(std::string_view decision) {
  // One pass over the quotes instead of a search per key: each key opens right after one.
  static constexpr std::string_view keys[] = {"reason_step\"", "tool_call_id\"", "compensates\"",
                                              "flow\"", "rejected\""};
  for (auto q = decision.find('"'); q != std::string_view::npos; q = decision.find('"', q + 1)) {
    const auto rest = decision.substr(q + 1);
    for (auto key : keys)
      if (rest.starts_with(key))
        return true;
  }
  return false;
}

void read_decision(const step& s, step_facts& out) {
  if (!may_hold_facts(s.decision))
    return;
  auto doc = json::parse(s.decision);
  if (!doc || !doc->IsObject())
    return;
  out.thought = json::string_or(*doc, "thought");
  const auto* detail = json::member(*doc, "detail");
  if (detail != nullptr && detail->IsObject()) {
    out.reason_step = json::int_of(*detail, "reason_step").value_or(0);
    out.tool_call_id = json::string_or(*detail, "tool_call_id");
    out.compensates = json::int_of(*detail, "compensates").value_or(0);
    out.flow = flow_of(detail);
  }
  if (const auto* p = json::member(*doc, "policy"))
    out.rejected = json::string_or(*p, "effect") == "rejected";
}

void read_args(const step& s, step_facts& out) {
  if (s.kind != step_kind::timer && s.kind != step_kind::observe && s.kind != step_kind::subruns &&
      s.kind != step_kind::reason)
    return; // a tool's arguments are the tool's business
  auto doc = json::parse(s.args);
  if (!doc || !doc->IsObject())
    return;
  out.until = json::int_of(*doc, "until_us").value_or(0);
  out.for_step = json::int_of(*doc, "for_step").value_or(0);
  out.check = json::string_or(*doc, "check");
  out.request_hash = json::string_or(*doc, "request_hash");
  if (s.kind != step_kind::subruns)
    return;
  runs_wait w;
  if (json::string_or(*doc, "join") == "any")
    w.join = flows::join_mode::any;
  w.single_goal = json::bool_or(*doc, "single_goal");
  w.timeout_ms = std::max<std::int64_t>(json::int_of(*doc, "timeout_ms").value_or(0), 0);
  if (const auto* runs = json::member(*doc, "runs"); runs && runs->IsArray())
    for (const auto& x : runs->GetArray())
      if (const auto* key = json::member(x, "key"); key && key->IsString())
        w.keys.emplace_back(key->GetString(), key->GetStringLength());
  out.runs = std::move(w);
}

} // namespace

std::optional<model_answer> read_answer(std::string_view result) {
  auto doc = json::parse(result);
  if (!doc || !doc->IsObject())
    return std::nullopt;
  model_answer out;
  out.text = json::string_or(*doc, "text");
  out.bad = json::string_or(*doc, "bad");
  if (const auto* calls = json::member(*doc, "tool_calls"); calls && calls->IsArray())
    for (const auto& c : calls->GetArray())
      if (c.IsObject())
        out.calls.push_back(
          {json::string_or(c, "id"), json::string_or(c, "name"), json::string_or(c, "arguments")});
  return out;
}

step_facts read_facts(const step& s) {
  step_facts out;
  read_decision(s, out);
  read_args(s, out);
  if (s.kind == step_kind::reason && s.state == step_state::succeeded)
    out.answer = read_answer(s.result);
  return out;
}

} // namespace sreh::actors
