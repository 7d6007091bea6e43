#include "actors/gateway/llm_provider.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "actors/tools/tool.hpp"
#include "core/base/hash.hpp"
#include "core/base/json.hpp"

namespace sreh::actors {

namespace {

constexpr const char* builtin_system_prompt =
  "You are sreh, an SRE agent working on a production incident. Find the cause with the tools "
  "you are given, then act to fix it when a tool can, and verify the fix. Call one tool at a "
  "time when a result decides the next step. Every action is checked by policy and may need a "
  "human's approval. When you are done, answer with a short conclusion: the cause, what you "
  "did, and the evidence. End it with a ```json block that states the same for machines: "
  "{\"detected\": true if something is at fault, \"diagnoses\": [{\"target\": the faulty "
  "service or host as the tools name it, \"kind\": the fault in snake_case (bad_deploy, "
  "bad_flag, memory_leak, disk_full, cert_expired, traffic_spike, dependency_slowdown, ...), "
  "\"evidence\": [{\"step\": the journal step of a tool result that shows it (each result "
  "starts with \"[journal step N]\"), \"fact\": what that result shows}]}], \"ruled_out\": "
  "[{\"target\", \"kind\", \"reason\"}]}. If you cannot make progress, say so plainly.";

} // namespace

std::string wire_tool_name(std::string_view name) {
  std::string out;
  for (char c : name)
    out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-') ? c : '_';
  return out.substr(0, 64);
}

llm_provider::llm_provider(model_gateway_ptr gateway, model_provider_ptr fallback,
                           const config::model_config& m, std::int64_t max_result_bytes)
  : gateway_(std::move(gateway)), fallback_(std::move(fallback)),
    system_prompt_(m.system_prompt.empty() ? builtin_system_prompt : m.system_prompt),
    prompt_version_(m.system_prompt.empty()            ? default_system_prompt_version
                    : !m.system_prompt_version.empty() ? m.system_prompt_version
                                                       : "custom-" + fnv1a64_hex(m.system_prompt)),
    max_repairs_(m.max_repairs), max_tokens_(m.main.max_tokens), by_label_(m.by_label) {
  for (const auto& r : gateway_->chain())
    chain_name_ += (chain_name_.empty() ? "" : ", ") + r.provider +
                   (r.provider == "builtin" ? "" : " " + r.model);
  budget_.max_input_tokens = m.main.max_input_tokens;
  budget_.keep_last = static_cast<std::size_t>(m.keep_last);
  budget_.max_result_bytes =
    static_cast<std::size_t>(std::max<std::int64_t>(256, max_result_bytes));
}

std::string llm_provider::route_for(const run& r) const {
  if (by_label_.empty())
    return {};
  auto labels = json::parse(r.labels);
  if (!labels || !labels->IsObject())
    return {};
  for (const auto& rule : by_label_) {
    auto m = labels->FindMember(rule.label.c_str());
    if (m != labels->MemberEnd() && m->value.IsString() && rule.value == m->value.GetString())
      return rule.route;
  }
  return {};
}

decision llm_provider::decide(const run_context&) {
  decision d;
  d.kind = decision::give_up;
  d.conclusion = "the model gateway is called through reason steps only";
  return d;
}

reason_request llm_provider::prepare(const run_context& ctx, const std::string& notes,
                                     llm::prior_steps_cache* cache) const {
  llm::context_input in;
  in.system_prompt = system_prompt_;
  in.goal = ctx.r.goal;
  if (auto labels = json::parse(ctx.r.labels); labels && labels->IsObject())
    for (const auto& m : labels->GetObject())
      if (m.value.IsString())
        in.labels.emplace_back(m.name.GetString(), m.value.GetString());
  // What the run starts with besides its goal (a Work's story, works/conversation.hpp): the
  // "Current state" of the context.
  if (ctx.r.spec.find("\"context\"") != std::string::npos)
    if (auto spec = json::parse_object(ctx.r.spec))
      in.snapshot = json::string_or(*spec, "context");
  for (const auto& t : ctx.tools.all())
    in.tools.push_back({wire_tool_name(t->name()), t->description(), t->schema()});
  for (const auto& s : ctx.steps)
    if (is_recall(s))
      for (auto& o : ctx.tools.observations_of(s))
        if (auto* p = std::get_if<obs::past_cases>(&o))
          in.memories.insert(in.memories.end(), p->cases.begin(), p->cases.end());
  auto on_wire = [](llm::prior_step& s) {
    if (s.has_call)
      s.call.name = wire_tool_name(s.call.name);
  };
  if (cache != nullptr) {
    in.kept_steps = &cache->of(ctx.steps, on_wire);
  } else {
    in.steps = llm::prior_steps_of(ctx.steps);
    std::for_each(in.steps.begin(), in.steps.end(), on_wire);
  }
  in.max_tokens = max_tokens_;
  auto assembled = llm::assemble_context(in, budget_);
  if (!notes.empty())
    assembled.request.messages.push_back(llm::message::user(notes));
  reason_request out;
  out.report = assembled.report;
  out.request = std::move(assembled.request);
  // The hash covers what the model is asked: system, messages and tools (not the route), each
  // field after a separator byte.
  fnv1a64 h;
  h.add(out.request.system);
  for (const auto& m : out.request.messages) {
    h.add("\x1e").add(llm::to_string(m.role)).add("\x1f").add(m.text);
    for (const auto& c : m.tool_calls)
      h.add("\x1f").add(c.id).add("\x1f").add(c.name).add("\x1f").add(c.arguments);
    h.add("\x1f").add(m.result.tool_call_id).add("\x1f").add(m.result.content).add("\x1f");
    h.add(m.result.is_error ? "true" : "false");
  }
  for (const auto& t : out.request.tools)
    h.add("\x1d").add(t.name).add("\x1f").add(t.description).add("\x1f").add(t.parameters);
  out.hash = "fnv1a64:" + h.hex();
  return out;
}

} // namespace sreh::actors
