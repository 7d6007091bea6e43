#include "plugins/sre/prometheus/entity.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <vector>

namespace sreh::plugins::prometheus {

namespace {

using actors::tool_result;
using mapping = settings::entity_mapping;
using promql_metric = settings::promql_metric;

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

std::string kind_of(const settings& c, const rapidjson::Value& args) {
  auto k = arg(args, "kind");
  if (!k.empty())
    return k;
  if (c.entities.size() == 1)
    return c.entities.begin()->first;
  return "service";
}

std::string kinds_mapped(const settings& c) {
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

std::optional<obs::capability> entity_capability(const settings& c) {
  if (c.entities.empty())
    return std::nullopt;
  obs::capability cap;
  cap.kind = obs::capability_kind::describe;
  for (const auto& [k, m] : c.entities)
    cap.entity_kinds.push_back(k);
  cap.args = {{std::string{obs::role::entity}, "entity"}, {std::string{obs::role::kind}, "kind"}};
  return cap;
}

std::size_t max_entity_queries(const settings& c) {
  std::size_t most = 0;
  for (const auto& [k, m] : c.entities)
    most = std::max(most, 2 * m.metrics.size() + m.fields.size());
  return most;
}

namespace {

/// One description in progress: the samples its queries took, the metrics without a value, notes
/// on queries of several series, and the queries themselves (the result's `queries`).
class description {
 public:
  description(const server& srv, const std::string& tool, const std::string& kind,
              const std::string& name)
    : srv_(srv), tool_(tool), kind_(kind), name_(name) {
    q_.StartObject();
  }

  /// Samples `metric` now and, when it has a value and a baseline, its usual value. The error
  /// is the first query's that failed.
  expected<bool> metric(const std::string& metric, const promql_metric& pq) {
    auto promql = expand_entity(pq.query, name_);
    auto now = instant(srv_, tool_, where("metrics", metric), promql);
    if (!now)
      return now.error();
    take(*now, metric, "now", current_);
    if (!now->value)
      missing_.push_back(metric);
    q_.Key(metric.c_str());
    q_.StartObject();
    q_.Key("query");
    q_.String(promql);
    std::string base =
      !pq.baseline.empty() ? expand_entity(pq.baseline, name_) : srv_.cfg().baseline;
    if (pq.baseline.empty()) // `$query` of the default is the metric's own expression
      for (auto at = base.find("$query"); at != std::string::npos;
           at = base.find("$query", at + promql.size()))
        base.replace(at, 6, promql);
    if (!base.empty() && now->value) {
      q_.Key("baseline");
      q_.String(base);
      auto usual = instant(srv_, tool_, where("metrics", metric) + ".baseline", base);
      if (!usual)
        return usual.error();
      take(*usual, metric, "baseline", baseline_);
    }
    q_.EndObject();
    return true;
  }

  /// Samples the numeric state `field` now.
  expected<bool> field(const std::string& field, const std::string& pq) {
    auto promql = expand_entity(pq, name_);
    auto v = instant(srv_, tool_, where("fields", field), promql);
    if (!v)
      return v.error();
    take(*v, field, "now", fields_);
    q_.Key(field.c_str());
    q_.StartObject();
    q_.Key("query");
    q_.String(promql);
    q_.EndObject();
    return true;
  }

  [[nodiscard]] bool empty() const { return current_.empty() && fields_.empty(); }

  /// The tool's result (once every query ran).
  [[nodiscard]] std::string render() {
    q_.EndObject();
    rapidjson::StringBuffer buf;
    json::writer w(buf);
    w.StartObject();
    w.Key("entity");
    w.String(name_);
    w.Key("kind");
    w.String(kind_);
    w.Key("current");
    write_numbers(w, current_);
    w.Key("baseline");
    write_numbers(w, baseline_);
    w.Key("fields");
    write_numbers(w, fields_);
    w.Key("settle_ms"); // how soon after an action these values can show it (prometheus.settle)
    w.Int64(srv_.cfg().settle_ms);
    w.Key("queries");
    json::raw(w, {qbuf_.GetString(), qbuf_.GetSize()});
    for (auto [key, xs] : {std::pair{"missing", &missing_}, std::pair{"notes", &notes_}}) {
      w.Key(key);
      w.StartArray();
      for (const auto& x : *xs)
        w.String(x);
      w.EndArray();
    }
    w.EndObject();
    return {buf.GetString(), buf.GetSize()};
  }

 private:
  [[nodiscard]] std::string where(const char* part, const std::string& key) const {
    return fmt::format("prometheus.entities.{}.{}.{}", kind_, part, key);
  }
  void take(const sample& s, const std::string& key, const char* what,
            std::map<std::string, double>& into) {
    if (s.series > 1)
      notes_.push_back(fmt::format("{} {}: {} series, the largest counts", key, what, s.series));
    if (s.value)
      into[key] = *s.value;
  }

  const server& srv_;
  const std::string& tool_;
  const std::string& kind_;
  const std::string& name_;
  std::map<std::string, double> current_, baseline_, fields_;
  std::vector<std::string> missing_, notes_;
  rapidjson::StringBuffer qbuf_;
  json::writer q_{qbuf_};
};

} // namespace

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
  description d{srv, tool, kind, name};
  for (const auto& [metric, pq] : m.metrics)
    if (auto ok = d.metric(metric, pq); !ok)
      return tool_result::failure(ok.error().message);
  for (const auto& [field, pq] : m.fields)
    if (auto ok = d.field(field, pq); !ok)
      return tool_result::failure(ok.error().message);
  if (d.empty())
    return tool_result::failure(fmt::format(
      "{}: Prometheus has no series for {} '{}': no query of prometheus.entities.{} returned a "
      "sample (e.g. {})",
      tool, kind, name, kind, expand_entity(m.metrics.begin()->second.query, name)));
  return tool_result::success(d.render());
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
