#include "eval/replay/recorded_answer.hpp"

#include <fmt/format.h>

#include "core/journal/step_text.hpp"
#include "core/llm/wire.hpp"

namespace sreh::eval::detail {

namespace {

namespace wire = llm::wire;
using journal::object_of;

llm::finish_reason finish_of(const std::string& s) {
  for (auto f : {llm::finish_reason::stop, llm::finish_reason::tool_calls,
                 llm::finish_reason::length, llm::finish_reason::refusal})
    if (s == llm::to_string(f))
      return f;
  return llm::finish_reason::other;
}

std::vector<std::string> strings_of(const rapidjson::Value* v) {
  std::vector<std::string> out;
  if (v && v->IsArray())
    for (const auto& x : v->GetArray())
      if (x.IsString())
        out.emplace_back(x.GetString());
  return out;
}

} // namespace

actors::gateway_result recorded_answer(const step& s) {
  actors::gateway_result g;
  if (s.kind != step_kind::reason) {
    g.error = fmt::format("replay: recorded step {} is a {} step, not a model call", s.n,
                          to_string(s.kind));
    return g;
  }
  auto doc = object_of(s.result);
  if (s.state == step_state::intent || !doc) {
    g.error = fmt::format("replay: the recording has no answer for step {}", s.n);
    return g;
  }
  g.log = strings_of(json::member(*doc, "attempts"));
  if (s.state != step_state::succeeded) {
    constexpr std::string_view prefix = "no model answered: ";
    g.error = s.error.starts_with(prefix) ? s.error.substr(prefix.size()) : s.error;
    return g;
  }
  g.route = json::string_or(*doc, "answered_by");
  if (g.route == "builtin") { // the chain's last resort decided: it decides again here
    if (!g.log.empty() && g.log.back() == "builtin: answered")
      g.log.pop_back();
    g.reached_builtin = true;
    g.error = "replay: the recorded answer came from the builtin reasoner";
    return g;
  }
  g.ok = true;
  g.provider = json::string_or(*doc, "provider");
  g.model = json::string_or(*doc, "model");
  g.latency_ms = json::int_of(*doc, "latency_ms").value_or(0);
  auto& r = g.response;
  r.id = json::string_or(*doc, "id");
  r.model = g.model;
  r.text = json::string_or(*doc, "text");
  r.refusal = json::string_or(*doc, "refusal");
  r.finish = finish_of(json::string_or(*doc, "finish"));
  r.raw_finish = json::string_or(*doc, "raw_finish");
  if (const auto* calls = json::member(*doc, "tool_calls"); calls && calls->IsArray())
    for (const auto& c : calls->GetArray())
      if (c.IsObject())
        r.tool_calls.push_back(
          {json::string_or(c, "id"), json::string_or(c, "name"), json::string_or(c, "arguments")});
  if (const auto* u = json::member(*doc, "usage"); u && u->IsObject())
    r.usage = llm::usage{json::int_of(*u, "input_tokens").value_or(0),
                         json::int_of(*u, "output_tokens").value_or(0)};
  return g;
}

} // namespace sreh::eval::detail
