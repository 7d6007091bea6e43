#include "core/llm/wire.hpp"

#include "core/base/json.hpp"
#include "core/base/text.hpp"

namespace sreh::llm::wire {

std::string arguments_of(const rapidjson::Value* v) {
  if (v == nullptr || v->IsNull())
    return "{}";
  if (v->IsString()) {
    std::string s{v->GetString(), v->GetStringLength()};
    return s.empty() ? std::string{"{}"} : s;
  }
  return json::stringify(*v);
}

} // namespace sreh::llm::wire

namespace sreh::llm {

api_error error_from_json(int http_status, const rapidjson::Value& v) {
  api_error e;
  e.http_status = http_status;
  const rapidjson::Value* obj = &v;
  if (auto* nested = json::member(v, "error")) {
    if (nested->IsObject()) {
      obj = nested;
    } else {
      e.message = json::text_of(*nested); // Ollama: {"error":"model 'x' not found"}
      return e;
    }
  }
  e.message = json::string_or(*obj, "message");
  e.type = json::string_or(*obj, "type");
  if (e.type == "error") // a flat body's own "type" is the envelope, not the error's type
    e.type.clear();
  if (auto* code = json::member(*obj, "code"))
    e.code = json::text_of(*code);
  if (e.message.empty() && e.type.empty() && e.code.empty())
    e.message = std::string{utf8_prefix(json::stringify(v), 300)};
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
    e.message = std::string{utf8_prefix(text, 300)};
    return e;
  }
  return error_from_json(http_status, *doc);
}

} // namespace sreh::llm
