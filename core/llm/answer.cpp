#include "core/llm/answer.hpp"

#include <optional>

#include "core/base/json.hpp"

namespace sreh::llm {

namespace {

std::string_view trimmed(std::string_view s) {
  auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos)
    return {};
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

/// `text` as a structured result, normalized; nullopt when it is not one.
std::optional<std::string> as_result(std::string_view text) {
  auto doc = json::parse(text);
  if (!doc || !doc->IsObject())
    return std::nullopt;
  const auto* detected = json::member(*doc, "detected");
  auto* diagnoses =
    doc->FindMember("diagnoses") != doc->MemberEnd() ? &(*doc)["diagnoses"] : nullptr;
  if (detected != nullptr && !detected->IsBool())
    return std::nullopt;
  if (diagnoses != nullptr) {
    if (!diagnoses->IsArray())
      return std::nullopt;
    for (auto& d : diagnoses->GetArray()) {
      const auto* target = json::member(d, "target");
      const auto* kind = json::member(d, "kind");
      if (!d.IsObject() || target == nullptr || !target->IsString() || kind == nullptr ||
          !kind->IsString())
        return std::nullopt;
      auto ev = d.FindMember("evidence");
      if (ev == d.MemberEnd() || !ev->value.IsArray())
        continue;
      for (auto& e : ev->value.GetArray())
        if (e.IsInt64()) { // a step number: the builtin's shape is {"step": N}
          rapidjson::Value o{rapidjson::kObjectType};
          o.AddMember("step", e.GetInt64(), doc->GetAllocator());
          e = o;
        }
    }
  }
  if (detected == nullptr && diagnoses == nullptr)
    return std::nullopt;
  return json::stringify(*doc);
}

} // namespace

final_answer split_final_answer(std::string_view answer) {
  // A fenced block, the last one.
  if (auto open = answer.rfind("```json"); open != std::string_view::npos) {
    auto body = open + 7;
    auto close = answer.find("```", body);
    if (close != std::string_view::npos)
      if (auto r = as_result(answer.substr(body, close - body))) {
        std::string text{trimmed(answer.substr(0, open))};
        auto after = trimmed(answer.substr(close + 3));
        if (!after.empty())
          text += (text.empty() ? "" : "\n") + std::string{after};
        return {std::move(text), std::move(*r)};
      }
  }
  // An object that closes the answer: the first `{` from which the rest parses as one.
  auto t = trimmed(answer);
  if (!t.empty() && t.back() == '}')
    for (auto at = t.find('{'); at != std::string_view::npos; at = t.find('{', at + 1))
      if (auto r = as_result(t.substr(at)))
        return {std::string{trimmed(t.substr(0, at))}, std::move(*r)};
  return {std::string{trimmed(answer)}, {}};
}

} // namespace sreh::llm
