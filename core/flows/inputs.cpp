#include "core/flows/inputs.hpp"

#include <fmt/format.h>

#include <cmath>

#include "core/base/duration.hpp"
#include "core/base/json.hpp"

namespace sreh::flows {

namespace {

sreh::error bad(const input_spec& in, std::string_view what) {
  return {errc::invalid_argument, fmt::format("inputs.{}: {}", in.name, what)};
}

sreh::error wrong(const input_spec& in, std::string_view wanted, const rapidjson::Value& v) {
  return bad(in, fmt::format("expected {}, got {}", wanted, json::type_of(v)));
}

} // namespace

expected<std::string> input_value(const input_spec& in, const rapidjson::Value& v) {
  switch (in.type) {
  case input_type::string:
    if (!v.IsString())
      return wrong(in, "a string", v);
    return json::stringify(v);
  case input_type::number:
    if (!v.IsNumber())
      return wrong(in, "a number", v);
    return json::stringify(v);
  case input_type::boolean:
    if (!v.IsBool())
      return wrong(in, "true or false", v);
    return std::string{v.GetBool() ? "true" : "false"};
  case input_type::duration: {
    if (v.IsString()) {
      auto s = parse_duration_s(v.GetString());
      if (!s || *s < 0)
        return bad(
          in, fmt::format("expected a duration like 30s, 15m, 1h or 2d, got '{}'", v.GetString()));
      return std::to_string(*s);
    }
    if (!v.IsNumber() || v.GetDouble() < 0 || std::floor(v.GetDouble()) != v.GetDouble())
      return wrong(in, "a duration (\"5m\" or whole seconds)", v);
    return std::to_string(static_cast<std::int64_t>(v.GetDouble()));
  }
  case input_type::list:
    if (!v.IsArray())
      return wrong(in, "a list of strings", v);
    for (const auto& x : v.GetArray())
      if (!x.IsString())
        return bad(
          in, fmt::format("expected a list of strings, got an item of type {}", json::type_of(x)));
    return json::stringify(v);
  }
  return bad(in, "unknown type");
}

std::string input_from_text(const input_spec& in, std::string_view text) {
  switch (in.type) {
  case input_type::number: {
    auto doc = json::parse(text);
    return doc && doc->IsNumber() ? std::string{text} : json::quote(text);
  }
  case input_type::boolean:
    return text == "true" || text == "false" ? std::string{text} : json::quote(text);
  case input_type::list: {
    std::string out = "[";
    std::size_t at = 0;
    while (!text.empty()) {
      auto comma = text.find(',', at);
      out += (out.size() > 1 ? "," : "") +
             json::quote(text.substr(at, comma == std::string_view::npos ? text.npos : comma - at));
      if (comma == std::string_view::npos)
        break;
      at = comma + 1;
    }
    return out + "]";
  }
  default:
    return json::quote(text);
  }
}

expected<std::map<std::string, std::string>> resolve_inputs(const flow& f,
                                                            std::string_view inputs_json) {
  auto doc = json::parse_object(inputs_json.empty() ? std::string_view{"{}"} : inputs_json);
  if (!doc)
    return sreh::error{errc::invalid_argument, "inputs: " + doc.error().message};
  std::map<std::string, std::string> out;
  for (auto m = doc->MemberBegin(); m != doc->MemberEnd(); ++m) {
    std::string name{m->name.GetString(), m->name.GetStringLength()};
    const auto* in = f.input(name);
    if (in == nullptr) {
      std::vector<std::string> names;
      for (const auto& x : f.inputs)
        names.push_back(x.name);
      return sreh::error{
        errc::invalid_argument,
        fmt::format("inputs.{}: flow '{}' has no such input (its inputs: {})", name, f.name,
                    names.empty() ? "none" : fmt::format("{}", fmt::join(names, ", ")))};
    }
    auto v = input_value(*in, m->value);
    if (!v)
      return v.error();
    out[name] = std::move(*v);
  }
  for (const auto& in : f.inputs) {
    if (out.count(in.name))
      continue;
    if (!in.default_json)
      return bad(in, fmt::format("missing (flow '{}' requires it)", f.name));
    out[in.name] = *in.default_json;
  }
  return out;
}

std::string placeholder_text(std::string_view value_json) {
  auto doc = json::parse(value_json);
  if (!doc)
    return std::string{value_json};
  if (doc->IsString())
    return doc->GetString();
  if (doc->IsArray()) {
    std::string out;
    for (const auto& x : doc->GetArray())
      out +=
        (out.empty() ? "" : ",") + (x.IsString() ? std::string{x.GetString()} : json::stringify(x));
    return out;
  }
  return std::string{value_json};
}

expected<expr::value> expression_value(std::string_view value_json) {
  auto doc = json::parse(value_json);
  if (!doc)
    return doc.error();
  if (doc->IsNumber())
    return expr::value{doc->GetDouble()};
  if (doc->IsString())
    return expr::value{std::string{doc->GetString()}};
  if (doc->IsBool())
    return expr::value{doc->GetBool()};
  return sreh::error{errc::invalid_argument,
                     fmt::format("{} cannot be compared", json::type_of(*doc))};
}

} // namespace sreh::flows
