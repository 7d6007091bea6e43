#include "core/llm/wire.hpp"

#include <cmath>

#include "core/base/json.hpp"

namespace sreh::llm::wire {

const rapidjson::Value* member(const rapidjson::Value& v, const char* key) {
  if (!v.IsObject())
    return nullptr;
  auto it = v.FindMember(key);
  return it == v.MemberEnd() ? nullptr : &it->value;
}

std::string string_or(const rapidjson::Value& v, const char* key, std::string fallback) {
  auto* m = member(v, key);
  if (m == nullptr || !m->IsString())
    return fallback;
  return {m->GetString(), m->GetStringLength()};
}

std::optional<std::int64_t> int_of(const rapidjson::Value& v, const char* key) {
  auto* m = member(v, key);
  if (m == nullptr || !m->IsNumber())
    return std::nullopt;
  if (m->IsInt64())
    return m->GetInt64();
  if (m->IsUint64())
    return static_cast<std::int64_t>(std::min<std::uint64_t>(m->GetUint64(), INT64_MAX));
  double d = m->GetDouble();
  if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9e18)
    return static_cast<std::int64_t>(d);
  return std::nullopt;
}

std::string text_of(const rapidjson::Value& v) {
  if (v.IsNull())
    return {};
  if (v.IsString())
    return {v.GetString(), v.GetStringLength()};
  return json::stringify(v);
}

std::string arguments_of(const rapidjson::Value* v) {
  if (v == nullptr || v->IsNull())
    return "{}";
  if (v->IsString()) {
    std::string s{v->GetString(), v->GetStringLength()};
    return s.empty() ? std::string{"{}"} : s;
  }
  return json::stringify(*v);
}

std::string_view utf8_prefix(std::string_view s, std::size_t max) {
  if (s.size() <= max)
    return s;
  std::size_t n = max;
  // Back up over continuation bytes so that the cut falls before a lead byte.
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80)
    --n;
  return s.substr(0, n);
}

} // namespace sreh::llm::wire

namespace sreh::llm {

api_error error_from_json(int http_status, const rapidjson::Value& v) {
  api_error e;
  e.http_status = http_status;
  const rapidjson::Value* obj = &v;
  if (auto* nested = wire::member(v, "error")) {
    if (nested->IsObject()) {
      obj = nested;
    } else {
      e.message = wire::text_of(*nested); // Ollama: {"error":"model 'x' not found"}
      return e;
    }
  }
  e.message = wire::string_or(*obj, "message");
  e.type = wire::string_or(*obj, "type");
  if (e.type == "error") // a flat body's own "type" is the envelope, not the error's type
    e.type.clear();
  if (auto* code = wire::member(*obj, "code"))
    e.code = wire::text_of(*code);
  if (e.message.empty() && e.type.empty() && e.code.empty())
    e.message = std::string{wire::utf8_prefix(json::stringify(v), 300)};
  return e;
}

api_error parse_error_body(int http_status, std::string_view body) {
  auto doc = json::parse(body, 32);
  if (!doc || !doc->IsObject()) {
    api_error e;
    e.http_status = http_status;
    auto text = body;
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' '))
      text.remove_suffix(1);
    e.message = std::string{wire::utf8_prefix(text, 300)};
    return e;
  }
  return error_from_json(http_status, *doc);
}

} // namespace sreh::llm
