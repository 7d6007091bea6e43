#include "core/memory/memory.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <utility>

#include "core/base/json_object.hpp"

namespace sreh::memory {

namespace {

constexpr std::array<std::pair<kind, const char*>, 4> kind_names{{
  {kind::postmortem, "postmortem"},
  {kind::incident, "incident"},
  {kind::note, "note"},
  {kind::runbook, "runbook"},
}};

constexpr std::array<std::pair<change, const char*>, 4> change_names{{
  {change::create, "create"},
  {change::edit, "edit"},
  {change::rollback, "rollback"},
  {change::remove, "delete"},
}};

sreh::error too_large(std::string field, std::size_t size, std::size_t limit, const char* unit) {
  return {errc::too_large,
          fmt::format("memory: {} is {} {}, over the limit of {}", field, size, unit, limit)};
}

sreh::error check_text(const std::string& text) {
  if (text.find_first_not_of(" \t\r\n") == std::string::npos)
    return {errc::invalid_argument, "memory: text is empty"};
  if (text.size() > max_text_bytes)
    return too_large("text", text.size(), max_text_bytes, "bytes");
  if (auto at = json::invalid_utf8_at(text))
    return {errc::invalid_argument, fmt::format("memory: text is not UTF-8 at byte {}", *at)};
  return {};
}

sreh::error check_labels(const std::map<std::string, std::string>& labels) {
  if (labels.size() > max_labels)
    return too_large("labels", labels.size(), max_labels, "labels");
  for (const auto& [k, v] : labels) {
    if (k.empty())
      return {errc::invalid_argument, "memory: a label has an empty name"};
    if (k.size() > max_label_key_bytes)
      return too_large(fmt::format("label name '{}…'", k.substr(0, 16)), k.size(),
                       max_label_key_bytes, "bytes");
    if (v.size() > max_label_value_bytes)
      return too_large(fmt::format("labels.{}", k), v.size(), max_label_value_bytes, "bytes");
  }
  return {};
}

sreh::error check_entities(const std::vector<std::string>& entities) {
  if (entities.size() > max_entities)
    return too_large("entities", entities.size(), max_entities, "entities");
  for (std::size_t i = 0; i < entities.size(); ++i) {
    if (entities[i].empty())
      return {errc::invalid_argument, fmt::format("memory: entities[{}] is empty", i)};
    if (entities[i].size() > max_entity_bytes)
      return too_large(fmt::format("entities[{}]", i), entities[i].size(), max_entity_bytes,
                       "bytes");
  }
  return {};
}

std::vector<std::string> sorted_unique(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

void write_labels(json::writer& w, const std::map<std::string, std::string>& labels) {
  w.StartObject();
  for (const auto& [k, v] : labels)
    json::field(w, k, v);
  w.EndObject();
}

/// The next version of `current`, made by `author` now (its content still `current`'s).
entry next_version(const entry& current, change how, std::string_view author, timestamp_us now) {
  entry e = current;
  ++e.version;
  e.made_by = how;
  e.author = std::string{author};
  e.updated_at = now;
  e.restored_from = 0;
  e.deleted = false;
  return e;
}

expected<std::map<std::string, std::string>> labels_member(const rapidjson::Value& v) {
  if (!v.IsObject())
    return sreh::error{errc::invalid_argument,
                       fmt::format("memory: labels must be an object, not {}", json::type_of(v))};
  std::map<std::string, std::string> out;
  for (const auto& m : v.GetObject()) {
    if (!m.value.IsString())
      return sreh::error{errc::invalid_argument,
                         fmt::format("memory: labels.{} must be a string, not {}",
                                     m.name.GetString(), json::type_of(m.value))};
    out[m.name.GetString()] = m.value.GetString();
  }
  return out;
}

expected<std::vector<std::string>> entities_member(const rapidjson::Value& v) {
  if (!v.IsArray())
    return sreh::error{errc::invalid_argument, fmt::format("memory: entities must be an array, "
                                                           "not {}",
                                                           json::type_of(v))};
  std::vector<std::string> out;
  for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
    if (!v[i].IsString())
      return sreh::error{
        errc::invalid_argument,
        fmt::format("memory: entities[{}] must be a string, not {}", i, json::type_of(v[i]))};
    out.emplace_back(v[i].GetString());
  }
  return out;
}

sreh::error refuse_unknown_members(const rapidjson::Value& body,
                                   std::initializer_list<std::string_view> known) {
  for (const auto& m : body.GetObject()) {
    const std::string_view name = m.name.GetString();
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      std::string names;
      for (auto k : known)
        names += (names.empty() ? "" : ", ") + std::string{k};
      return {errc::invalid_argument,
              fmt::format("memory: unknown member '{}' (known: {})", name, names)};
    }
  }
  return {};
}

} // namespace

const char* to_string(kind k) {
  for (const auto& [v, name] : kind_names)
    if (v == k)
      return name;
  return "note";
}

std::optional<kind> parse_kind(std::string_view s) {
  for (const auto& [v, name] : kind_names)
    if (s == name)
      return v;
  return std::nullopt;
}

const char* to_string(change c) {
  for (const auto& [v, name] : change_names)
    if (v == c)
      return name;
  return "create";
}

std::optional<change> parse_change(std::string_view s) {
  for (const auto& [v, name] : change_names)
    if (s == name)
      return v;
  return std::nullopt;
}

sreh::error validate(const draft& d) {
  if (auto err = check_text(d.text))
    return err;
  if (auto err = check_labels(d.labels))
    return err;
  return check_entities(d.entities);
}

expected<entry> create(draft d, std::string id, std::string_view author, timestamp_us now) {
  if (auto err = validate(d))
    return err;
  entry e;
  e.id = std::move(id);
  e.kind = d.kind;
  e.text = std::move(d.text);
  e.labels = std::move(d.labels);
  e.entities = sorted_unique(std::move(d.entities));
  e.from = std::move(d.from);
  e.author = std::string{author};
  e.created_at = now;
  e.updated_at = now;
  return e;
}

expected<entry> edit(const entry& current, const patch& p, std::string_view author,
                     timestamp_us now) {
  if (current.deleted)
    return sreh::error{errc::not_found, fmt::format("memory {} is deleted (roll it back to a "
                                                    "version to restore it)",
                                                    current.id)};
  if (!p.text && !p.labels && !p.entities)
    return sreh::error{errc::invalid_argument,
                       "memory: an edit needs text, labels or entities (nothing to change)"};
  entry e = next_version(current, change::edit, author, now);
  if (p.text)
    e.text = *p.text;
  if (p.labels)
    e.labels = *p.labels;
  if (p.entities)
    e.entities = sorted_unique(*p.entities);
  if (auto err = validate(draft{e.kind, e.text, e.labels, e.entities, {}}))
    return err;
  return e;
}

expected<entry> rollback(const entry& current, const entry& old, std::string_view author,
                         timestamp_us now) {
  if (old.id != current.id || old.version >= current.version)
    return sreh::error{errc::invalid_argument,
                       fmt::format("memory {}: version {} is not an earlier version (newest is {})",
                                   current.id, old.version, current.version)};
  if (old.deleted)
    return sreh::error{
      errc::invalid_argument,
      fmt::format("memory {}: version {} is a deletion; roll back to one with text", current.id,
                  old.version)};
  entry e = next_version(current, change::rollback, author, now);
  e.text = old.text;
  e.labels = old.labels;
  e.entities = old.entities;
  e.restored_from = old.version;
  return e;
}

expected<entry> remove(const entry& current, std::string_view author, timestamp_us now) {
  if (current.deleted)
    return sreh::error{errc::not_found, fmt::format("memory {} is already deleted", current.id)};
  entry e = next_version(current, change::remove, author, now);
  e.deleted = true;
  return e;
}

std::string tags_text(const entry& e) {
  std::string out = to_string(e.kind);
  for (const auto& [k, v] : e.labels)
    out += ' ' + v;
  for (const auto& id : e.entities)
    out += ' ' + id;
  return out;
}

void write_json(json::writer& w, const entry& e) {
  w.StartObject();
  write_members(w, e);
  w.EndObject();
}

void write_members(json::writer& w, const entry& e) {
  json::fields(w, "id", e.id, "kind", to_string(e.kind), "text",
               e.deleted ? std::string_view{} : std::string_view{e.text});
  w.Key("labels");
  write_labels(w, e.labels);
  json::fields(w, "entities", e.entities, "version", e.version, "deleted", e.deleted, "author",
               e.author, "change", to_string(e.made_by));
  if (e.restored_from > 0)
    json::field(w, "restored_from", e.restored_from);
  if (!e.from.run_id.empty())
    json::field(w, "run_id", e.from.run_id);
  if (!e.from.work_id.empty())
    json::field(w, "work_id", e.from.work_id);
  w.Key("created_at");
  json::timestamp(w, e.created_at);
  w.Key("updated_at");
  json::timestamp(w, e.updated_at);
}

std::string labels_json(const std::map<std::string, std::string>& labels) {
  return json::build([&](json::writer& w) { write_labels(w, labels); });
}

expected<std::map<std::string, std::string>> read_labels(std::string_view text) {
  auto doc = json::parse(text);
  if (!doc)
    return sreh::error{errc::internal, "memory labels: " + doc.error().message};
  auto labels = labels_member(*doc);
  if (!labels)
    return sreh::error{errc::internal, labels.error().message};
  return labels;
}

std::string entities_json(const std::vector<std::string>& entities) {
  return json::array(entities, [](json::writer& w, const std::string& id) { w.String(id); });
}

expected<std::vector<std::string>> read_entities(std::string_view text) {
  auto doc = json::parse(text);
  if (!doc)
    return sreh::error{errc::internal, "memory entities: " + doc.error().message};
  auto ids = entities_member(*doc);
  if (!ids)
    return sreh::error{errc::internal, ids.error().message};
  return ids;
}

expected<draft> read_draft(const rapidjson::Value& body) {
  if (!body.IsObject())
    return sreh::error{errc::invalid_argument, "memory: the body must be a JSON object"};
  if (auto err = refuse_unknown_members(body, {"kind", "text", "labels", "entities"}))
    return err;
  draft d;
  const auto* k = json::member(body, "kind");
  if (k == nullptr || !k->IsString())
    return sreh::error{errc::invalid_argument,
                       "memory: kind is required (postmortem, incident, note or runbook)"};
  auto parsed = parse_kind(k->GetString());
  if (!parsed)
    return sreh::error{errc::invalid_argument,
                       fmt::format("memory: unknown kind '{}' (known: postmortem, incident, note, "
                                   "runbook)",
                                   k->GetString())};
  d.kind = *parsed;
  const auto* text = json::member(body, "text");
  if (text == nullptr || !text->IsString())
    return sreh::error{
      errc::invalid_argument,
      text == nullptr ? std::string{"memory: text is required"}
                      : fmt::format("memory: text must be a string, not {}", json::type_of(*text))};
  d.text = text->GetString();
  if (const auto* l = json::member(body, "labels")) {
    auto labels = labels_member(*l);
    if (!labels)
      return labels.error();
    d.labels = std::move(*labels);
  }
  if (const auto* en = json::member(body, "entities")) {
    auto ids = entities_member(*en);
    if (!ids)
      return ids.error();
    d.entities = std::move(*ids);
  }
  if (auto err = validate(d))
    return err;
  return d;
}

expected<patch> read_patch(const rapidjson::Value& body) {
  if (!body.IsObject())
    return sreh::error{errc::invalid_argument, "memory: the body must be a JSON object"};
  if (auto err = refuse_unknown_members(body, {"text", "labels", "entities"}))
    return err;
  patch p;
  if (const auto* text = json::member(body, "text")) {
    if (!text->IsString())
      return sreh::error{
        errc::invalid_argument,
        fmt::format("memory: text must be a string, not {}", json::type_of(*text))};
    p.text = text->GetString();
  }
  if (const auto* l = json::member(body, "labels")) {
    auto labels = labels_member(*l);
    if (!labels)
      return labels.error();
    p.labels = std::move(*labels);
  }
  if (const auto* en = json::member(body, "entities")) {
    auto ids = entities_member(*en);
    if (!ids)
      return ids.error();
    p.entities = std::move(*ids);
  }
  return p;
}

} // namespace sreh::memory
