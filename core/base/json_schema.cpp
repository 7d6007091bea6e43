#include "core/base/json_schema.hpp"

#include <fmt/format.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

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
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  v.Accept(w);
  std::string s = buf.GetString();
  if (s.size() > 60)
    s = s.substr(0, 57) + "...";
  return s;
}

bool has_type(const rapidjson::Value& v, std::string_view t) {
  if (t == "integer")
    return v.IsInt64() || v.IsUint64() ||
           (v.IsDouble() &&
            v.GetDouble() == static_cast<double>(static_cast<long long>(v.GetDouble())));
  if (t == "number")
    return v.IsNumber();
  if (t == "boolean")
    return v.IsBool();
  return type_name(v) == t;
}

std::string where(const std::string& path) {
  return path.empty() ? std::string{"arguments"} : fmt::format("field '{}'", path);
}

sreh::error fail(const std::string& path, const std::string& what) {
  return {errc::invalid_argument, fmt::format("{}: {}", where(path), what)};
}

sreh::error check(const rapidjson::Value& schema, const rapidjson::Value& v,
                  const std::string& path);

sreh::error check_type(const rapidjson::Value& schema, const rapidjson::Value& v,
                       const std::string& path) {
  auto t = schema.FindMember("type");
  if (t == schema.MemberEnd())
    return {};
  if (t->value.IsString()) {
    if (!has_type(v, t->value.GetString()))
      return fail(path, fmt::format("expected {}, got {}", t->value.GetString(), type_name(v)));
    return {};
  }
  if (t->value.IsArray()) {
    std::string names;
    for (auto& alt : t->value.GetArray()) {
      if (alt.IsString() && has_type(v, alt.GetString()))
        return {};
      names += names.empty() ? "" : " or ";
      names += alt.IsString() ? alt.GetString() : "?";
    }
    return fail(path, fmt::format("expected {}, got {}", names, type_name(v)));
  }
  return {};
}

sreh::error check_object(const rapidjson::Value& schema, const rapidjson::Value& v,
                         const std::string& path) {
  auto props = schema.FindMember("properties");
  if (auto req = schema.FindMember("required"); req != schema.MemberEnd() && req->value.IsArray())
    for (auto& name : req->value.GetArray())
      if (name.IsString() && !v.HasMember(name.GetString()))
        return fail(path.empty() ? name.GetString() : path + "." + name.GetString(), "is required");
  bool closed = false;
  if (auto ap = schema.FindMember("additionalProperties");
      ap != schema.MemberEnd() && ap->value.IsBool())
    closed = !ap->value.GetBool();
  for (auto& m : v.GetObject()) {
    std::string sub = path.empty() ? m.name.GetString() : path + "." + m.name.GetString();
    const rapidjson::Value* ps = nullptr;
    if (props != schema.MemberEnd() && props->value.IsObject()) {
      auto p = props->value.FindMember(m.name);
      if (p != props->value.MemberEnd())
        ps = &p->value;
    }
    if (ps == nullptr) {
      if (closed)
        return fail(sub, "is not a known argument");
      continue;
    }
    if (auto err = check(*ps, m.value, sub))
      return err;
  }
  return {};
}

sreh::error check_scalar(const rapidjson::Value& schema, const rapidjson::Value& v,
                         const std::string& path) {
  if (v.IsNumber()) {
    double d = v.GetDouble();
    if (auto m = schema.FindMember("minimum");
        m != schema.MemberEnd() && m->value.IsNumber() && d < m->value.GetDouble())
      return fail(path, fmt::format("must be >= {}, got {}", show(m->value), show(v)));
    if (auto m = schema.FindMember("maximum");
        m != schema.MemberEnd() && m->value.IsNumber() && d > m->value.GetDouble())
      return fail(path, fmt::format("must be <= {}, got {}", show(m->value), show(v)));
  }
  if (v.IsString()) {
    auto len = v.GetStringLength();
    if (auto m = schema.FindMember("minLength");
        m != schema.MemberEnd() && m->value.IsUint() && len < m->value.GetUint())
      return fail(path, fmt::format("must be at least {} characters", m->value.GetUint()));
    if (auto m = schema.FindMember("maxLength");
        m != schema.MemberEnd() && m->value.IsUint() && len > m->value.GetUint())
      return fail(path, fmt::format("must be at most {} characters", m->value.GetUint()));
  }
  return {};
}

sreh::error check(const rapidjson::Value& schema, const rapidjson::Value& v,
                  const std::string& path) {
  if (!schema.IsObject())
    return {};
  if (auto err = check_type(schema, v, path))
    return err;
  if (auto e = schema.FindMember("enum"); e != schema.MemberEnd() && e->value.IsArray()) {
    bool found = false;
    std::string allowed;
    for (auto& alt : e->value.GetArray()) {
      found = found || alt == v;
      allowed += (allowed.empty() ? "" : ", ") + show(alt);
    }
    if (!found)
      return fail(path, fmt::format("must be one of {}, got {}", allowed, show(v)));
  }
  if (v.IsObject())
    return check_object(schema, v, path);
  if (v.IsArray()) {
    auto n = v.Size();
    if (auto m = schema.FindMember("minItems");
        m != schema.MemberEnd() && m->value.IsUint() && n < m->value.GetUint())
      return fail(path, fmt::format("needs at least {} items", m->value.GetUint()));
    if (auto m = schema.FindMember("maxItems");
        m != schema.MemberEnd() && m->value.IsUint() && n > m->value.GetUint())
      return fail(path, fmt::format("takes at most {} items", m->value.GetUint()));
    if (auto items = schema.FindMember("items"); items != schema.MemberEnd())
      for (rapidjson::SizeType i = 0; i < n; ++i)
        if (auto err = check(items->value, v[i], fmt::format("{}[{}]", path, i)))
          return err;
    return {};
  }
  return check_scalar(schema, v, path);
}

} // namespace

sreh::error validate(const rapidjson::Value& schema, const rapidjson::Value& value) {
  return check(schema, value, "");
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
