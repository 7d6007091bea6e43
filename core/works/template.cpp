#include "core/works/template.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>

#include "core/base/duration.hpp"
#include "core/base/json.hpp"

namespace sreh::works {

const char* to_string(field_type t) {
  switch (t) {
  case field_type::string:
    return "string";
  case field_type::integer:
    return "integer";
  case field_type::number:
    return "number";
  case field_type::boolean:
    return "boolean";
  case field_type::choice:
    return "choice";
  }
  return "?";
}

std::optional<field_type> parse_field_type(std::string_view s) {
  for (auto t : {field_type::string, field_type::integer, field_type::number, field_type::boolean,
                 field_type::choice})
    if (s == to_string(t))
      return t;
  return std::nullopt;
}

namespace {

sreh::error bad(std::string msg) {
  return {errc::invalid_argument, std::move(msg)};
}

/// Walks `text`, calling `literal(piece)` and `field(name)`; an error for a bad brace.
template <class Literal, class Field>
sreh::error scan(std::string_view text, Literal literal, Field field) {
  std::size_t i = 0;
  while (i < text.size()) {
    auto c = text[i];
    if ((c == '{' || c == '}') && i + 1 < text.size() && text[i + 1] == c) {
      literal(text.substr(i, 1));
      i += 2;
      continue;
    }
    if (c == '}')
      return bad(fmt::format("position {}: '}}' without '{{' (write '}}}}' for a brace)", i + 1));
    if (c != '{') {
      auto next = text.find_first_of("{}", i);
      if (next == std::string_view::npos)
        next = text.size();
      literal(text.substr(i, next - i));
      i = next;
      continue;
    }
    auto close = text.find('}', i + 1);
    if (close == std::string_view::npos)
      return bad(fmt::format("position {}: '{{' is not closed (write '{{{{' for a brace)", i + 1));
    auto name = text.substr(i + 1, close - i - 1);
    if (name.empty() || name.find_first_of(" {") != std::string_view::npos)
      return bad(fmt::format("position {}: expected a field name in '{{...}}'", i + 1));
    if (auto err = field(name))
      return err;
    i = close + 1;
  }
  return {};
}

} // namespace

expected<std::vector<std::string>> placeholders(std::string_view text) {
  std::vector<std::string> out;
  auto err = scan(
    text, [](std::string_view) {},
    [&](std::string_view name) {
      out.emplace_back(name);
      return sreh::error{};
    });
  if (err)
    return err;
  return out;
}

expected<std::string> render(std::string_view text,
                             const std::map<std::string, std::string>& values) {
  std::string out;
  auto err = scan(
    text, [&](std::string_view piece) { out.append(piece); },
    [&](std::string_view name) {
      auto i = values.find(std::string{name});
      if (i == values.end())
        return bad(fmt::format("no value for field '{}'", name));
      out += i->second;
      return sreh::error{};
    });
  if (err)
    return err;
  return out;
}

expected<done_criteria> parse_done_criteria(std::string_view text) {
  done_criteria d;
  auto at = text.rfind(" for ");
  if (at != std::string_view::npos) {
    auto dur = text.substr(at + 5);
    while (!dur.empty() && dur.back() == ' ')
      dur.remove_suffix(1);
    auto s = parse_duration_s(dur);
    if (!s || *s < 0 || dur.front() == '+' || dur.front() == '-')
      return bad(fmt::format("expected a duration like 30s, 5m or 1h after 'for', got '{}'", dur));
    d.for_s = *s;
    text = text.substr(0, at);
  }
  d.condition.text = std::string{text};
  return d;
}

const field_spec* work_template::field(std::string_view n) const {
  for (const auto& f : fields)
    if (f.name == n)
      return &f;
  return nullptr;
}

const std::vector<std::string>& builtin_kinds() {
  static const std::vector<std::string> kinds{"incident", "change", "maintenance", "investigation"};
  return kinds;
}

namespace {

expected<std::string> field_text(const field_spec& f, const rapidjson::Value& v) {
  auto wrong = [&](std::string_view want) {
    return bad(fmt::format("fields.{}: expected {}, got {}", f.name, want, json::type_of(v)));
  };
  switch (f.type) {
  case field_type::string:
    if (!v.IsString())
      return wrong("a string");
    return std::string{v.GetString(), v.GetStringLength()};
  case field_type::integer:
    if (!v.IsInt64())
      return wrong("an integer");
    return std::to_string(v.GetInt64());
  case field_type::number:
    if (!v.IsNumber())
      return wrong("a number");
    return v.IsInt64() ? std::to_string(v.GetInt64()) : fmt::format("{}", v.GetDouble());
  case field_type::boolean:
    if (!v.IsBool())
      return wrong("true or false");
    return std::string{v.GetBool() ? "true" : "false"};
  case field_type::choice: {
    if (!v.IsString())
      return wrong(fmt::format("one of {}", fmt::join(f.choices, ", ")));
    std::string s{v.GetString(), v.GetStringLength()};
    for (const auto& c : f.choices)
      if (c == s)
        return s;
    return bad(fmt::format("fields.{}: expected one of {}, got '{}'", f.name,
                           fmt::join(f.choices, ", "), s));
  }
  }
  return wrong("a value");
}

} // namespace

expected<std::map<std::string, std::string>> resolve_fields(const work_template& t,
                                                            std::string_view fields_json) {
  auto doc = json::parse_object(fields_json.empty() ? std::string_view{"{}"} : fields_json);
  if (!doc)
    return bad("fields: " + doc.error().message);
  std::map<std::string, std::string> out;
  for (auto m = doc->MemberBegin(); m != doc->MemberEnd(); ++m) {
    std::string name{m->name.GetString(), m->name.GetStringLength()};
    const auto* f = t.field(name);
    if (!f) {
      std::vector<std::string> names;
      for (const auto& x : t.fields)
        names.push_back(x.name);
      return bad(fmt::format("fields.{}: template '{}' has no such field (its fields: {})", name,
                             t.name,
                             names.empty() ? "none" : fmt::format("{}", fmt::join(names, ", "))));
    }
    auto v = field_text(*f, m->value);
    if (!v)
      return v.error();
    out[name] = std::move(*v);
  }
  for (const auto& f : t.fields) {
    if (out.count(f.name))
      continue;
    if (f.default_value)
      out[f.name] = *f.default_value;
    else if (f.required)
      return bad(fmt::format("fields.{}: missing (template '{}' requires it)", f.name, t.name));
  }
  return out;
}

} // namespace sreh::works
