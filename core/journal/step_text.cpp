#include "core/journal/step_text.hpp"

#include "core/base/json.hpp"

namespace sreh::journal {

std::string canonical(const std::string& args) {
  auto doc = json::parse(args.empty() ? "{}" : args);
  return doc ? json::stringify(*doc) : args;
}

std::string key_of(const std::string& tool, const std::string& args) {
  return tool + '\x1f' + canonical(args);
}

std::optional<rapidjson::Document> object_of(const std::string& text) {
  auto doc = json::parse(text.empty() ? "{}" : text);
  if (!doc || !doc->IsObject())
    return std::nullopt;
  return std::move(*doc);
}

std::string policy_effect(const step& s) {
  auto d = object_of(s.decision);
  const auto* p = d ? json::member(*d, "policy") : nullptr;
  return p && p->IsObject() ? json::string_or(*p, "effect") : std::string{};
}

std::string policy_rule(const step& s) {
  auto d = object_of(s.decision);
  const auto* p = d ? json::member(*d, "policy") : nullptr;
  return p && p->IsObject() ? json::string_or(*p, "rule") : std::string{};
}

bool is_compensation(const step& s) {
  auto d = object_of(s.decision);
  const auto* detail = d ? json::member(*d, "detail") : nullptr;
  return detail && detail->IsObject() && json::member(*detail, "compensates") != nullptr;
}

bool was_called(const step& s) {
  if (s.kind != step_kind::tool ||
      (s.state != step_state::succeeded && s.state != step_state::failed))
    return false;
  auto effect = policy_effect(s);
  if (effect == "deny" || effect == "rejected")
    return false;
  for (const char* prefix :
       {"not executed", "cancelled before execution", "unknown tool", "invalid arguments for"})
    if (s.error.starts_with(prefix))
      return false;
  return true;
}

std::string clip(std::string s, std::size_t width) {
  for (auto& c : s)
    if (c == '\n' || c == '\r' || c == '\t')
      c = ' ';
  if (s.size() > width)
    s = s.substr(0, width - 3) + "...";
  return s;
}

} // namespace sreh::journal
