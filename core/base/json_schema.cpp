#include "core/base/json_schema.hpp"

#include <fmt/format.h>
#include <rapidjson/pointer.h>
#include <rapidjson/schema.h>
#include <rapidjson/stringbuffer.h>

#include "core/base/json.hpp"

namespace sreh::json {

namespace {

/// json::type_of, with integers told from other numbers (schemas say "integer").
std::string type_name(const rapidjson::Value& v) {
  if (v.IsNumber() && (v.IsInt64() || v.IsUint64()))
    return "integer";
  return json::type_of(v);
}

std::string show(const rapidjson::Value& v) {
  std::string s = json::stringify(v);
  if (s.size() > 60)
    s = s.substr(0, 57) + "...";
  return s;
}

/// The pointer's tokens as users read a path: "services[0].name"; empty at the top.
std::string dotted(const rapidjson::Pointer& p, const rapidjson::Value& root) {
  std::string out;
  const rapidjson::Value* at = &root;
  for (std::size_t i = 0; i < p.GetTokenCount(); ++i) {
    const auto& t = p.GetTokens()[i];
    std::string name{t.name, t.length};
    if (at != nullptr && at->IsArray()) {
      out += "[" + name + "]";
      at = t.index < at->Size() ? &(*at)[t.index] : nullptr;
    } else {
      out += (out.empty() ? "" : ".") + name;
      const rapidjson::Value* next = nullptr;
      if (at != nullptr && at->IsObject())
        if (auto m = at->FindMember(name.c_str()); m != at->MemberEnd())
          next = &m->value;
      at = next;
    }
  }
  return out;
}

std::string pointer_text(const rapidjson::Pointer& p) {
  rapidjson::StringBuffer buf;
  p.Stringify(buf);
  return buf.GetString();
}

std::string type_list(const rapidjson::Value* t) {
  if (t == nullptr)
    return "another type";
  if (t->IsString())
    return t->GetString();
  std::string names;
  if (t->IsArray())
    for (auto& alt : t->GetArray())
      names += (names.empty() ? "" : " or ") + std::string{alt.IsString() ? alt.GetString() : "?"};
  return names;
}

/// What the failing keyword means for this value, in words.
std::string what(std::string_view keyword, const rapidjson::Value& schema,
                 const rapidjson::Value& v) {
  auto num = [&](const char* k) {
    auto* m = member(schema, k);
    return m != nullptr ? show(*m) : std::string{"?"};
  };
  if (keyword == "type")
    return fmt::format("expected {}, got {}", type_list(member(schema, "type")), type_name(v));
  if (keyword == "enum") {
    std::string allowed;
    if (auto* e = member(schema, "enum"); e != nullptr && e->IsArray())
      for (auto& alt : e->GetArray())
        allowed += (allowed.empty() ? "" : ", ") + show(alt);
    return fmt::format("must be one of {}, got {}", allowed, show(v));
  }
  if (keyword == "minimum")
    return fmt::format("must be >= {}, got {}", num("minimum"), show(v));
  if (keyword == "maximum")
    return fmt::format("must be <= {}, got {}", num("maximum"), show(v));
  if (keyword == "minLength")
    return fmt::format("must be at least {} characters", num("minLength"));
  if (keyword == "maxLength")
    return fmt::format("must be at most {} characters", num("maxLength"));
  if (keyword == "minItems")
    return fmt::format("needs at least {} items", num("minItems"));
  if (keyword == "maxItems")
    return fmt::format("takes at most {} items", num("maxItems"));
  if (keyword == "pattern")
    return fmt::format("must match the pattern {}, got {}", num("pattern"), show(v));
  if (keyword == "additionalProperties")
    return "is not a known argument";
  if (keyword == "multipleOf")
    return fmt::format("must be a multiple of {}, got {}", num("multipleOf"), show(v));
  return fmt::format("does not satisfy '{}' of its schema, got {}", keyword, show(v));
}

/// The first name of `required` that `v` lacks.
std::string missing_required(const rapidjson::Value& schema, const rapidjson::Value& v) {
  if (auto* req = member(schema, "required"); req != nullptr && req->IsArray() && v.IsObject())
    for (auto& name : req->GetArray())
      if (name.IsString() && !v.HasMember(name.GetString()))
        return name.GetString();
  return {};
}

} // namespace

sreh::error validate(const rapidjson::Value& schema, const rapidjson::Value& value) {
  if (!schema.IsObject())
    return {};
  rapidjson::SchemaDocument doc(schema);
  rapidjson::SchemaValidator validator(doc);
  if (value.Accept(validator))
    return {};
  std::string keyword = validator.GetInvalidSchemaKeyword();
  rapidjson::Pointer at = validator.GetInvalidDocumentPointer();
  const rapidjson::Value* sub = validator.GetInvalidSchemaPointer().Get(schema);
  const rapidjson::Value* bad = at.Get(value);
  static const rapidjson::Value null_value;
  const rapidjson::Value& s = sub != nullptr ? *sub : null_value;
  const rapidjson::Value& v = bad != nullptr ? *bad : null_value;
  std::string text;
  if (keyword == "required") {
    auto name = missing_required(s, v);
    at = at.Append(name.c_str(), static_cast<rapidjson::SizeType>(name.size()));
    text = "is required";
  } else {
    text = what(keyword, s, v);
  }
  auto path = dotted(at, value);
  // The old message's words, then the keyword and the JSON pointer (RFC 6901) of the value.
  return {errc::invalid_argument,
          fmt::format("{}: {} (keyword '{}' at pointer \"{}\")",
                      path.empty() ? std::string{"arguments"} : "field '" + path + "'", text,
                      keyword, pointer_text(at))};
}

sreh::error validate(std::string_view schema_json, std::string_view value_json) {
  auto schema = parse(schema_json);
  if (!schema)
    return {errc::internal, "tool schema is not valid JSON: " + schema.error().message};
  auto value = parse(value_json);
  if (!value)
    return {errc::invalid_argument, "arguments: " + value.error().message};
  return validate(*schema, *value);
}

} // namespace sreh::json
