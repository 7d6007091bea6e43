#include "core/flows/reference.hpp"

#include <fmt/format.h>

#include <cctype>

#include "core/base/json.hpp"

namespace sreh::flows {

namespace {

std::vector<std::string> split(std::string_view s) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (true) {
    auto dot = s.find('.', i);
    out.emplace_back(s.substr(i, dot == std::string_view::npos ? std::string_view::npos : dot - i));
    if (dot == std::string_view::npos)
      return out;
    i = dot + 1;
  }
}

sreh::error bad(std::string_view path) {
  return {errc::invalid_argument,
          fmt::format("expected inputs.NAME, steps.ID.output[.FIELD...], steps.ID.status or "
                      "world.ENTITY.METRIC, got '{}'",
                      path)};
}

bool word_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' ||
         c == '+';
}

template <class Each>
expected<std::string> substitute(std::string_view text, const resolver& value, Each check) {
  auto found = placeholders(text);
  if (!found)
    return found.error();
  std::string out;
  std::size_t i = 0;
  for (const auto& p : *found) {
    for (; i < p.pos; ++i) { // copy, turning `$$` into `$`
      out += text[i];
      if (text[i] == '$' && i + 1 < text.size() && text[i + 1] == '$')
        ++i;
    }
    auto r = parse_reference(p.path);
    if (!r)
      return sreh::error{errc::invalid_argument,
                         fmt::format("position {}: {}", p.pos + 1, r.error().message)};
    auto v = value(*r);
    if (!v)
      return sreh::error{v.error().code,
                         fmt::format("position {}: {}", p.pos + 1, v.error().message)};
    if (auto err = check(p, *v))
      return err;
    out += *v;
    i = p.pos + p.path.size() + 3;
  }
  for (; i < text.size(); ++i) {
    out += text[i];
    if (text[i] == '$' && i + 1 < text.size() && text[i + 1] == '$')
      ++i;
  }
  return out;
}

} // namespace

expected<reference> parse_reference(std::string_view path) {
  auto parts = split(path);
  for (const auto& p : parts)
    if (p.empty())
      return bad(path);
  reference r;
  if (parts[0] == "inputs" && parts.size() == 2) {
    r.kind = reference::input;
    r.name = parts[1];
  } else if (parts[0] == "steps" && parts.size() >= 3 && parts[2] == "output") {
    r.kind = reference::step_output;
    r.name = parts[1];
    r.path.assign(parts.begin() + 3, parts.end());
  } else if (parts[0] == "steps" && parts.size() == 3 && parts[2] == "status") {
    r.kind = reference::step_status;
    r.name = parts[1];
  } else if (parts[0] == "world" && parts.size() == 3) {
    r.kind = reference::world;
    r.name = parts[1];
    r.path = {parts[2]};
  } else {
    return bad(path);
  }
  return r;
}

expected<std::vector<placeholder>> placeholders(std::string_view text) {
  std::vector<placeholder> out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '$')
      continue;
    if (i + 1 < text.size() && text[i + 1] == '$') {
      ++i;
      continue;
    }
    if (i + 1 >= text.size() || text[i + 1] != '{')
      continue; // a lone `$` is itself
    auto close = text.find('}', i + 2);
    if (close == std::string_view::npos)
      return sreh::error{errc::invalid_argument,
                         fmt::format("position {}: unclosed '${{' (write $$ for a '$')", i + 1)};
    auto path = text.substr(i + 2, close - i - 2);
    if (path.find_first_not_of(" \t") == std::string_view::npos)
      return sreh::error{errc::invalid_argument, fmt::format("position {}: empty '${{}}'", i + 1)};
    out.push_back({std::string{path}, i});
    i = close;
  }
  return out;
}

expected<std::string> render(std::string_view text, const resolver& value) {
  return substitute(text, value,
                    [](const placeholder&, const std::string&) { return sreh::error{}; });
}

expected<std::string> render_expression(std::string_view text, const resolver& value) {
  return substitute(text, value, [](const placeholder& p, const std::string& v) {
    for (char c : v)
      if (!word_char(c))
        return sreh::error{errc::invalid_argument,
                           fmt::format("position {}: '${{{}}}' is '{}', which is not a name or a "
                                       "number",
                                       p.pos + 1, p.path, v)};
    if (v.empty())
      return sreh::error{errc::invalid_argument,
                         fmt::format("position {}: '${{{}}}' is empty", p.pos + 1, p.path)};
    return sreh::error{};
  });
}

expected<std::string> json_at(const std::string& json_text, const std::vector<std::string>& path,
                              const std::string& what) {
  auto doc = json::parse(json_text.empty() ? "null" : json_text);
  if (!doc)
    return sreh::error{errc::invalid_argument, fmt::format("{}: not JSON", what)};
  const rapidjson::Value* v = &*doc;
  std::string at = what;
  for (const auto& key : path) {
    at += "." + key;
    if (v->IsObject()) {
      auto m = v->FindMember(key.c_str());
      if (m == v->MemberEnd())
        return sreh::error{errc::not_found, fmt::format("{}: no such field", at)};
      v = &m->value;
    } else if (v->IsArray() && !key.empty() && key.find_first_not_of("0123456789") == key.npos &&
               std::stoul(key) < v->Size()) {
      v = &(*v)[static_cast<rapidjson::SizeType>(std::stoul(key))];
    } else {
      return sreh::error{errc::not_found,
                         fmt::format("{}: no such field ({} has none)", at, json::type_of(*v))};
    }
  }
  return json::stringify(*v);
}

expected<std::string> render_json(std::string_view args_json, const resolver& value) {
  auto doc = json::parse(args_json.empty() ? "{}" : args_json);
  if (!doc)
    return doc.error();
  sreh::error err;
  std::function<void(rapidjson::Value&)> visit = [&](rapidjson::Value& x) {
    if (err)
      return;
    if (x.IsString()) {
      auto r = render({x.GetString(), x.GetStringLength()}, value);
      if (!r) {
        err = r.error();
        return;
      }
      x.SetString(r->data(), static_cast<rapidjson::SizeType>(r->size()), doc->GetAllocator());
    } else if (x.IsArray()) {
      for (auto& y : x.GetArray())
        visit(y);
    } else if (x.IsObject()) {
      for (auto& m : x.GetObject())
        visit(m.value);
    }
  };
  visit(*doc);
  if (err)
    return err;
  return json::stringify(*doc);
}

} // namespace sreh::flows
