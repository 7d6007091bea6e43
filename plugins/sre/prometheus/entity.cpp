#include "plugins/sre/prometheus/entity.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <vector>

namespace sreh::plugins::prometheus {

namespace {

using actors::tool_result;
using mapping = config::prometheus_config::entity_mapping;

/// One query's sample now: the value of its only series (the largest of several), or none.
struct sample {
  std::optional<double> value;
  std::size_t series = 0;
};

std::optional<double> number_of(const rapidjson::Value& pair) {
  // [unix time, "value"]; "NaN" and "+Inf" are samples too, but not a value to reason over.
  if (!pair.IsArray() || pair.Size() != 2 || !pair[1].IsString())
    return std::nullopt;
  std::string_view text = pair[1].GetString();
  double v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || end != text.data() + text.size() || !std::isfinite(v))
    return std::nullopt;
  return v;
}

expected<sample> instant(const server& srv, const std::string& tool, const std::string& where,
                         const std::string& promql) {
  if (auto why = srv.refuse(promql); !why.empty())
    return sreh::error{errc::invalid_argument, fmt::format("{}: {}: {}", tool, where, why)};
  auto doc = srv.get(tool, "/api/v1/query", {{"query", promql}});
  if (!doc)
    return sreh::error{doc.error().code,
                       fmt::format("{} ({}: {})", doc.error().message, where, promql)};
  const auto& data = member(*doc, "data");
  const auto& result = member(data, "result");
  sample out;
  if (result.IsArray() && !result.Empty() && result[0].IsArray()) { // a scalar
    out.series = 1;
    out.value = number_of(result);
    return out;
  }
  if (result.IsArray())
    for (const auto& s : result.GetArray()) {
      ++out.series;
      if (auto v = number_of(member(s, "value")); v && (!out.value || *v > *out.value))
        out.value = v;
    }
  return out;
}

std::string kind_of(const config::prometheus_config& c, const rapidjson::Value& args) {
  auto k = arg(args, "kind");
  if (!k.empty())
    return k;
  if (c.entities.size() == 1)
    return c.entities.begin()->first;
  return "service";
}

std::string kinds_mapped(const config::prometheus_config& c) {
  std::string out;
  for (const auto& [k, m] : c.entities)
    out += (out.empty() ? "" : ", ") + k;
  return out;
}

void write_numbers(json::writer& w, const std::map<std::string, double>& m) {
  w.StartObject();
  for (const auto& [k, v] : m) {
    w.Key(k.c_str());
    w.Double(v);
  }
  w.EndObject();
}

std::map<std::string, double> numbers(const rapidjson::Value& obj) {
  std::map<std::string, double> out;
  if (obj.IsObject())
    for (const auto& m : obj.GetObject())
      if (m.value.IsNumber())
        out[m.name.GetString()] = m.value.GetDouble();
  return out;
}

} // namespace

std::string expand_entity(const std::string& promql, std::string_view name) {
  std::string literal;
  for (char c : name) {
    if (c == '\\' || c == '"')
      literal += '\\';
    literal += c;
  }
  std::string out;
  static constexpr std::string_view var = "$entity";
  std::size_t from = 0;
  for (auto at = promql.find(var); at != std::string::npos; at = promql.find(var, from)) {
    out.append(promql, from, at - from).append(literal);
    from = at + var.size();
  }
  return out.append(promql, from);
}

std::optional<obs::capability> entity_capability(const config::prometheus_config& c) {
  if (c.entities.empty())
    return std::nullopt;
  obs::capability cap;
  cap.kind = obs::capability_kind::describe;
  for (const auto& [k, m] : c.entities)
    cap.entity_kinds.push_back(k);
  cap.args = {{std::string{obs::role::entity}, "entity"}, {std::string{obs::role::kind}, "kind"}};
  return cap;
}

std::size_t max_entity_queries(const config::prometheus_config& c) {
  std::size_t most = 0;
  for (const auto& [k, m] : c.entities)
    most = std::max(most, 2 * m.metrics.size() + m.fields.size());
  return most;
}

tool_result describe_entity(const server& srv, const std::string& tool,
                            const rapidjson::Value& args) {
  const auto& c = srv.cfg();
  auto name = arg(args, "entity");
  auto kind = kind_of(c, args);
  auto it = c.entities.find(kind);
  if (it == c.entities.end())
    return tool_result::failure(
      c.entities.empty()
        ? fmt::format("{}: describing an entity needs prometheus.entities in the node's config",
                      tool)
        : fmt::format("{}: prometheus.entities maps no kind '{}' (it maps {})", tool, kind,
                      kinds_mapped(c)));
  const mapping& m = it->second;
  std::map<std::string, double> current, baseline, fields;
  std::vector<std::string> missing, notes;
  rapidjson::StringBuffer qbuf;
  json::writer q(qbuf);
  q.StartObject();
  auto where = [&](const std::string& part, const std::string& key) {
    return fmt::format("prometheus.entities.{}.{}.{}", kind, part, key);
  };
  auto take = [&](const expected<sample>& s, const std::string& key, const std::string& what,
                  std::map<std::string, double>& into) {
    if (s->series > 1)
      notes.push_back(fmt::format("{} {}: {} series, the largest counts", key, what, s->series));
    if (s->value)
      into[key] = *s->value;
  };
  for (const auto& [metric, pq] : m.metrics) {
    auto promql = expand_entity(pq.query, name);
    auto now = instant(srv, tool, where("metrics", metric), promql);
    if (!now)
      return tool_result::failure(now.error().message);
    take(now, metric, "now", current);
    if (!now->value)
      missing.push_back(metric);
    q.Key(metric.c_str());
    q.StartObject();
    q.Key("query");
    q.String(promql);
    std::string base = !pq.baseline.empty() ? expand_entity(pq.baseline, name) : c.baseline;
    if (pq.baseline.empty()) // `$query` of the default is the metric's own expression
      for (auto at = base.find("$query"); at != std::string::npos;
           at = base.find("$query", at + promql.size()))
        base.replace(at, 6, promql);
    if (!base.empty() && now->value) {
      q.Key("baseline");
      q.String(base);
      auto usual = instant(srv, tool, where("metrics", metric) + ".baseline", base);
      if (!usual)
        return tool_result::failure(usual.error().message);
      take(usual, metric, "baseline", baseline);
    }
    q.EndObject();
  }
  for (const auto& [field, pq] : m.fields) {
    auto promql = expand_entity(pq, name);
    auto v = instant(srv, tool, where("fields", field), promql);
    if (!v)
      return tool_result::failure(v.error().message);
    take(v, field, "now", fields);
    q.Key(field.c_str());
    q.StartObject();
    q.Key("query");
    q.String(promql);
    q.EndObject();
  }
  q.EndObject();
  if (current.empty() && fields.empty())
    return tool_result::failure(fmt::format(
      "{}: Prometheus has no series for {} '{}': no query of prometheus.entities.{} returned a "
      "sample (e.g. {})",
      tool, kind, name, kind, expand_entity(m.metrics.begin()->second.query, name)));

  rapidjson::StringBuffer buf;
  json::writer w(buf);
  w.StartObject();
  w.Key("entity");
  w.String(name);
  w.Key("kind");
  w.String(kind);
  w.Key("current");
  write_numbers(w, current);
  w.Key("baseline");
  write_numbers(w, baseline);
  w.Key("fields");
  write_numbers(w, fields);
  w.Key("settle_ms"); // how soon after an action these values can show it (prometheus.settle)
  w.Int64(c.settle_ms);
  w.Key("queries");
  json::raw(w, {qbuf.GetString(), qbuf.GetSize()});
  w.Key("missing");
  w.StartArray();
  for (const auto& x : missing)
    w.String(x);
  w.EndArray();
  w.Key("notes");
  w.StartArray();
  for (const auto& x : notes)
    w.String(x);
  w.EndArray();
  w.EndObject();
  return tool_result::success({buf.GetString(), buf.GetSize()});
}

obs::observations observe_entity(std::string_view result) {
  auto doc = json::parse_object(result);
  if (!doc || !doc->HasMember("entity") || !(*doc)["entity"].IsString())
    return {};
  obs::metric_sample s;
  s.entity.name = (*doc)["entity"].GetString();
  const auto& kind = member(*doc, "kind");
  s.entity.kind = kind.IsString() ? kind.GetString() : "";
  s.current = numbers(member(*doc, "current"));
  s.baseline = numbers(member(*doc, "baseline"));
  s.fields = numbers(member(*doc, "fields"));
  if (const auto& settle = member(*doc, "settle_ms"); settle.IsInt64())
    s.settle_ms = settle.GetInt64();
  return {std::move(s)};
}

} // namespace sreh::plugins::prometheus
