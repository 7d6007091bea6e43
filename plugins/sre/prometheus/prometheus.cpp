#include "plugins/sre/prometheus/prometheus.hpp"

#include <fmt/format.h>

#include <memory>
#include <regex>
#include <utility>
#include <vector>

#include "actors/tools/tool_spec.hpp"
#include "plugins/sre/prometheus/entity.hpp"
#include "plugins/sre/prometheus/server.hpp"

namespace sreh::plugins::prometheus {

namespace {

using actors::risk_class;
using actors::tool_call;
using actors::tool_result;

/// Writes `array` keeping at most `max` items; returns how many there were.
std::size_t capped_array(json::writer& w, const rapidjson::Value& array, std::size_t max) {
  w.StartArray();
  std::size_t n = 0;
  if (array.IsArray())
    for (const auto& x : array.GetArray()) {
      if (n++ < max)
        x.Accept(w);
    }
  w.EndArray();
  return n;
}

void put_warnings(json::writer& w, const rapidjson::Document& doc) {
  const auto& warnings = member(doc, "warnings");
  if (warnings.IsArray() && !warnings.GetArray().Empty()) {
    w.Key("warnings");
    warnings.Accept(w);
  }
}

/// The result of an instant or range query: resultType, the series (capped), their count and
/// whether anything was cut.
std::string render_query(const server& srv, const rapidjson::Document& doc, const std::string& q) {
  const auto& data = member(doc, "data");
  const auto& type = member(data, "resultType");
  const auto& result = member(data, "result");
  const auto max_series = static_cast<std::size_t>(srv.cfg().max_series);
  auto points_left = static_cast<std::size_t>(srv.cfg().max_points);
  rapidjson::StringBuffer buf;
  json::writer w(buf);
  w.StartObject();
  w.Key("query");
  w.String(q);
  w.Key("resultType");
  w.String(type.IsString() ? type.GetString() : "unknown");
  w.Key("result");
  std::size_t series = 0;
  bool cut = false;
  if (type.IsString() && std::string_view{type.GetString()} == "matrix" && result.IsArray()) {
    w.StartArray();
    for (const auto& s : result.GetArray()) {
      if (series++ >= max_series) {
        cut = true;
        continue;
      }
      w.StartObject();
      w.Key("metric");
      member(s, "metric").Accept(w);
      w.Key("values");
      auto n = capped_array(w, member(s, "values"), points_left);
      cut = cut || n > points_left;
      points_left -= std::min(n, points_left);
      w.EndObject();
    }
    w.EndArray();
  } else if (result.IsArray() && type.IsString() &&
             std::string_view{type.GetString()} == "vector") {
    series = capped_array(w, result, max_series);
    cut = series > max_series;
  } else {
    result.Accept(w); // scalar or string: [time, value]
  }
  w.Key("series");
  w.Uint64(series);
  w.Key("truncated");
  w.Bool(cut);
  put_warnings(w, doc);
  w.EndObject();
  return {buf.GetString(), buf.GetSize()};
}

/// An instant or range query. The instant one also describes an entity for the reasoner from
/// the `prometheus.entities` mapping (`{"entity", "kind"}` instead of `query`: entity.hpp).
tool_result query(const server& srv, const std::string& name, const rapidjson::Value& args,
                  bool range) {
  auto q = arg(args, "query");
  if (!range) {
    const bool entity = !arg(args, "entity").empty();
    if (entity == !q.empty())
      return tool_result::failure(
        name +
        ": give either `query` (PromQL) or `entity` (with `kind`: the entity "
        "described by the prometheus.entities mapping), not " +
        (entity ? "both" : "neither"));
    if (entity)
      return describe_entity(srv, name, args);
  }
  if (auto why = srv.refuse(q); !why.empty())
    return tool_result::failure(name + ": " + why);
  params ps{{"query", q}};
  static const std::vector<const char*> range_keys{"start", "end", "step"}, instant_keys{"time"};
  for (const char* k : range ? range_keys : instant_keys)
    if (auto v = arg(args, k); !v.empty())
      ps.emplace_back(k, v);
  auto doc = srv.get(name, range ? "/api/v1/query_range" : "/api/v1/query", ps);
  if (!doc)
    return tool_result::failure(doc.error().message);
  return tool_result::success(render_query(srv, *doc, q));
}

/// /api/v1/alerts, /api/v1/targets or /api/v1/series: one list, capped.
enum class listing { alerts, targets, series };

tool_result list(const server& srv, const std::string& name, const rapidjson::Value& args,
                 listing what) {
  params ps;
  if (what == listing::targets) {
    if (auto st = arg(args, "state"); !st.empty())
      ps.emplace_back("state", st);
  } else if (what == listing::series) {
    const auto& match = member(args, "match");
    for (const auto& m : match.GetArray()) {
      std::string sel = m.GetString();
      if (auto why = srv.refuse(sel); !why.empty())
        return tool_result::failure(name + ": " + why);
      ps.emplace_back("match[]", sel);
    }
    for (const char* k : {"start", "end"})
      if (auto v = arg(args, k); !v.empty())
        ps.emplace_back(k, v);
  }
  auto doc = srv.get(name,
                     what == listing::alerts    ? "/api/v1/alerts"
                     : what == listing::targets ? "/api/v1/targets"
                                                : "/api/v1/series",
                     ps);
  if (!doc)
    return tool_result::failure(doc.error().message);
  const auto& data = member(*doc, "data");
  const auto max = static_cast<std::size_t>(srv.cfg().max_series);
  rapidjson::StringBuffer buf;
  json::writer w(buf);
  w.StartObject();
  std::size_t n = 0;
  if (what == listing::alerts) {
    w.Key("alerts");
    n = capped_array(w, member(data, "alerts"), max);
  } else if (what == listing::targets) {
    w.Key("activeTargets");
    n = capped_array(w, member(data, "activeTargets"), max);
    const auto& dropped = member(data, "droppedTargets");
    w.Key("droppedTargets");
    w.Uint64(dropped.IsArray() ? dropped.Size() : 0);
  } else {
    w.Key("series");
    n = capped_array(w, data, max);
  }
  w.Key("count");
  w.Uint64(n);
  w.Key("truncated");
  w.Bool(n > max);
  put_warnings(w, *doc);
  w.EndObject();
  return tool_result::success({buf.GetString(), buf.GetSize()});
}

/// The part every Prometheus tool shares: read-only, blocking, a timeout of `queries` requests.
actors::tool_spec prom_tool(const settings& cfg, std::string name, std::string description,
                            std::string schema, std::int64_t queries = 1) {
  return {.name = std::move(name),
          .description = std::move(description),
          .schema = std::move(schema),
          .blocking = true,
          .timeout = std::chrono::milliseconds{cfg.timeout_ms * queries + 1000}};
}

actors::tool_spec query_tool(const std::shared_ptr<const server>& srv, bool range) {
  const auto& cfg = srv->cfg();
  auto t =
    prom_tool(cfg, range ? "prometheus.query_range" : "prometheus.query",
              range ? "Evaluates a PromQL expression over a time range (start, end, step)."
                    : "Evaluates a PromQL expression at one instant (default: now).",
              range ? R"({"type":"object","properties":{"query":{"type":"string","minLength":1,)"
                      R"("maxLength":4096},"start":{"type":["string","number"]},)"
                      R"("end":{"type":["string","number"]},"step":{"type":["string","number"]}},)"
                      R"("required":["query","start","end","step"],"additionalProperties":false})"
                    : R"({"type":"object","properties":{"query":{"type":"string","minLength":1,)"
                      R"("maxLength":4096},"time":{"type":["string","number"]},)"
                      R"("entity":{"type":"string","minLength":1,"maxLength":256},)"
                      R"("kind":{"type":"string","minLength":1,"maxLength":64}},)"
                      R"("additionalProperties":false})",
              range ? 1 : std::max<std::int64_t>(1, max_entity_queries(cfg)));
  t.run = [srv, range](const rapidjson::Value& args, const actors::tool_context& c) {
    return query(*srv, c.name, args, range);
  };
  if (range)
    return t;
  if (auto c = entity_capability(cfg))
    t.provides = {*c};
  t.observe = [](std::string_view args, std::string_view result) {
    auto a = json::parse_object(args);
    if (!a || arg(*a, "entity").empty())
      return obs::observations{};
    return observe_entity(result);
  };
  return t;
}

actors::tool_spec list_tool(const std::shared_ptr<const server>& srv, listing what) {
  auto t =
    what == listing::alerts ? prom_tool(srv->cfg(), "prometheus.alerts",
                                        "The alerts Prometheus's rules have pending or firing.",
                                        R"({"type":"object","additionalProperties":false})")
    : what == listing::targets
      ? prom_tool(srv->cfg(), "prometheus.targets",
                  "Prometheus's scrape targets: their health, last error and last scrape.",
                  R"({"type":"object","properties":{"state":{"type":"string","enum":["active",)"
                  R"("dropped","any"]}},"additionalProperties":false})")
      : prom_tool(
          srv->cfg(), "prometheus.series",
          "The series matching label selectors (match: [\"up{job=...}\"]).",
          R"({"type":"object","properties":{"match":{"type":"array","minItems":1,"maxItems":20,)"
          R"("items":{"type":"string","minLength":1,"maxLength":4096}},)"
          R"("start":{"type":["string","number"]},"end":{"type":["string","number"]}},)"
          R"("required":["match"],"additionalProperties":false})");
  t.run = [srv, what](const rapidjson::Value& args, const actors::tool_context& c) {
    return list(*srv, c.name, args, what);
  };
  return t;
}

} // namespace

void add_prometheus_tools(actors::tool_registry& out, const settings& cfg) {
  auto srv = std::make_shared<const server>(cfg);
  actors::add_tools(out,
                    {query_tool(srv, false), query_tool(srv, true), list_tool(srv, listing::alerts),
                     list_tool(srv, listing::targets), list_tool(srv, listing::series)});
}

} // namespace sreh::plugins::prometheus
