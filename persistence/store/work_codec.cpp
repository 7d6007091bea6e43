#include "persistence/store/work_codec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "core/base/json.hpp"
#include "persistence/store/approval_codec.hpp"

namespace sreh::persistence {

namespace {

char lower(char c) {
  return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
}

bool contains_ci(std::string_view text, std::string_view part) {
  return std::search(text.begin(), text.end(), part.begin(), part.end(),
                     [](char a, char b) { return lower(a) == lower(b); }) != text.end();
}

bool has_label(std::string_view labels, std::string_view key, std::string_view value) {
  auto doc = json::parse_object(labels);
  if (!doc)
    return false;
  auto it = doc->FindMember(std::string{key});
  return it != doc->MemberEnd() && it->value.IsString() &&
         std::string_view{it->value.GetString(), it->value.GetStringLength()} == value;
}

} // namespace

std::string compact_object(std::string_view text) {
  auto doc = json::parse_object(text);
  return doc ? json::stringify(*doc) : std::string{text};
}

std::string label_pattern(std::string_view key, std::string_view value) {
  rapidjson::StringBuffer buf;
  json::writer w{buf};
  w.StartObject();
  w.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()));
  w.String(value.data(), static_cast<rapidjson::SizeType>(value.size()));
  w.EndObject();
  const std::string_view all{buf.GetString(), buf.GetSize()};
  return std::string{all.substr(1, all.size() - 2)}; // without the braces
}

bool matches(const work_filter& f, const works::work& w) {
  return (!f.state || w.state == *f.state) && (f.kind.empty() || w.kind == f.kind) &&
         (f.severity.empty() || w.severity == f.severity) &&
         (f.label_key.empty() || has_label(w.labels, f.label_key, f.label_value)) &&
         (f.text.empty() || contains_ci(w.title, f.text));
}

sreh::error read_entity_columns(std::string_view attrs, std::string_view depends_on,
                                std::string_view source, world::entity& e) {
  if (auto err = world::read_attrs(attrs, e))
    return {errc::internal, fmt::format("attrs of entity {}: {}", e.id, err.message)};
  if (!read_strings(depends_on, e.depends_on))
    return {errc::internal, fmt::format("depends_on of entity {}: not a JSON array of strings "
                                        "({})",
                                        e.id, depends_on)};
  auto s = world::parse_change_source(source);
  if (!s)
    return {errc::internal, fmt::format("source of entity {}: unknown value '{}'", e.id, source)};
  e.source = *s;
  return {};
}

} // namespace sreh::persistence
