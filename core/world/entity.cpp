#include "core/world/entity.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include "core/base/json.hpp"

namespace sreh::world {

namespace {

std::vector<std::string> sorted_unique(std::vector<std::string> ids) {
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

void write_string(json::writer& w, std::string_view s) {
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

sreh::error bad_attrs(std::string_view what) {
  return {errc::internal, fmt::format("world: attrs: {}", what)};
}

} // namespace

const char* to_string(change_source s) {
  switch (s) {
  case change_source::sync:
    return "sync";
  case change_source::action:
    return "action";
  case change_source::observation:
    return "observation";
  }
  return "unknown";
}

std::optional<change_source> parse_change_source(std::string_view s) {
  for (auto c : {change_source::sync, change_source::action, change_source::observation})
    if (s == to_string(c))
      return c;
  return std::nullopt;
}

bool same_observation(const entity& a, const entity& b) {
  return a.kind == b.kind && a.metrics == b.metrics && a.props == b.props &&
         sorted_unique(a.depends_on) == sorted_unique(b.depends_on);
}

std::vector<entity> changes(const std::vector<entity>& current, const std::vector<entity>& seen,
                            change_source source, std::string_view changed_by, timestamp_us now) {
  std::map<std::string_view, const entity*> by_id;
  for (const auto& e : current)
    by_id.emplace(e.id, &e);
  std::map<std::string_view, entity> out; // by id; a later sight of the same id wins
  for (const auto& s : seen) {
    auto old = by_id.find(s.id);
    if (old != by_id.end() && same_observation(*old->second, s))
      continue;
    entity e = s;
    e.version = old == by_id.end() ? 1 : old->second->version + 1;
    e.depends_on = sorted_unique(std::move(e.depends_on));
    e.source = source;
    e.changed_by = std::string{changed_by};
    e.updated_at = now;
    out.insert_or_assign(s.id, std::move(e));
  }
  std::vector<entity> result;
  result.reserve(out.size());
  for (auto& [id, e] : out)
    result.push_back(std::move(e));
  return result;
}

expected<double> metric(const std::vector<entity>& graph, std::string_view id,
                        std::string_view name) {
  auto e = std::find_if(graph.begin(), graph.end(), [&](const entity& x) { return x.id == id; });
  if (e == graph.end())
    return sreh::error{errc::not_found, fmt::format("world: no entity '{}'", id)};
  auto m = e->metrics.find(std::string{name});
  if (m == e->metrics.end())
    return sreh::error{errc::not_found,
                       fmt::format("world: no metric '{}' of entity '{}'", name, id)};
  return m->second;
}

std::string attrs_json(const entity& e) {
  rapidjson::StringBuffer buf;
  json::writer w{buf};
  w.StartObject();
  w.Key("metrics");
  w.StartObject();
  for (const auto& [k, v] : e.metrics) {
    write_string(w, k);
    if (std::isfinite(v))
      w.Double(v);
    else
      w.Null(); // JSON has no NaN nor infinity: read back as NaN
  }
  w.EndObject();
  w.Key("props");
  w.StartObject();
  for (const auto& [k, v] : e.props) {
    write_string(w, k);
    write_string(w, v);
  }
  w.EndObject();
  w.EndObject();
  return {buf.GetString(), buf.GetSize()};
}

namespace {

/// The metrics of `text` (already validated) with their numbers as written: RapidJSON's
/// default number parsing (json::parse) may miss the last bit of a 17-digit value, from_chars
/// does not.
std::map<std::string, double> exact_metrics(std::string_view text) {
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseNumbersAsStringsFlag>(text.data(), text.size());
  std::map<std::string, double> out;
  if (doc.HasParseError() || !doc.IsObject() || !doc.HasMember("metrics"))
    return out;
  for (const auto& x : doc["metrics"].GetObject()) {
    double v = 0;
    const char* p = x.value.IsString() ? x.value.GetString() : nullptr;
    if (p != nullptr && std::from_chars(p, p + x.value.GetStringLength(), v).ec == std::errc{})
      out.emplace(std::string{x.name.GetString(), x.name.GetStringLength()}, v);
  }
  return out;
}

} // namespace

sreh::error read_attrs(std::string_view text, entity& e) {
  auto doc = json::parse_object(text);
  if (!doc)
    return bad_attrs(doc.error().message);
  std::map<std::string, double> metrics;
  std::map<std::string, std::string> props;
  for (const auto& m : doc->GetObject()) {
    const std::string_view key{m.name.GetString(), m.name.GetStringLength()};
    if (key != "metrics" && key != "props")
      return bad_attrs(fmt::format("unknown member '{}'", key));
    if (!m.value.IsObject())
      return bad_attrs(
        fmt::format("member '{}': expected an object, got {}", key, json::type_of(m.value)));
    for (const auto& x : m.value.GetObject()) {
      std::string name{x.name.GetString(), x.name.GetStringLength()};
      if (key == "metrics") {
        if (x.value.IsNull())
          metrics.emplace(std::move(name), std::numeric_limits<double>::quiet_NaN());
        else if (x.value.IsNumber())
          metrics.emplace(std::move(name), x.value.GetDouble());
        else
          return bad_attrs(
            fmt::format("metric '{}': expected a number, got {}", name, json::type_of(x.value)));
      } else if (x.value.IsString()) {
        props.emplace(std::move(name), std::string{x.value.GetString(), x.value.GetStringLength()});
      } else {
        return bad_attrs(
          fmt::format("prop '{}': expected a string, got {}", name, json::type_of(x.value)));
      }
    }
  }
  for (auto& [name, exact] : exact_metrics(text))
    if (auto m = metrics.find(name); m != metrics.end() && !std::isnan(m->second))
      m->second = exact;
  e.metrics = std::move(metrics);
  e.props = std::move(props);
  return {};
}

void write_json(json::writer& w, const entity& e, bool provenance) {
  auto str = [&w](std::string_view v) {
    w.String(v.data(), static_cast<rapidjson::SizeType>(v.size()));
  };
  w.StartObject();
  w.Key("id"), str(e.id);
  w.Key("kind"), str(e.kind);
  w.Key("version"), w.Int64(e.version);
  w.Key("metrics");
  w.StartObject();
  for (const auto& [k, v] : e.metrics) {
    w.Key(k.c_str(), static_cast<rapidjson::SizeType>(k.size()));
    w.Double(v);
  }
  w.EndObject();
  w.Key("props");
  w.StartObject();
  for (const auto& [k, v] : e.props) {
    w.Key(k.c_str(), static_cast<rapidjson::SizeType>(k.size()));
    str(v);
  }
  w.EndObject();
  w.Key("depends_on");
  w.StartArray();
  for (const auto& d : e.depends_on)
    str(d);
  w.EndArray();
  if (provenance) {
    w.Key("source"), w.String(to_string(e.source));
    w.Key("changed_by"), str(e.changed_by);
    w.Key("observed_at"), json::timestamp(w, e.observed_at);
    w.Key("updated_at"), json::timestamp(w, e.updated_at);
  }
  w.EndObject();
}

} // namespace sreh::world
