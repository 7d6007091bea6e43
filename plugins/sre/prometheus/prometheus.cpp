#include "plugins/sre/prometheus/prometheus.hpp"

#include <fmt/format.h>

#include <memory>
#include <regex>
#include <utility>
#include <vector>

#include "plugins/sre/prometheus/entity.hpp"
#include "plugins/sre/prometheus/server.hpp"

namespace sreh::plugins::prometheus {

namespace {

using actors::risk_class;
using actors::tool_call;
using actors::tool_result;

/// The common part of the five tools.
class prom_tool : public actors::tool {
 public:
  prom_tool(std::shared_ptr<const server> s, std::string name, std::string description,
            std::string schema)
    : srv_(std::move(s)), name_(std::move(name)), description_(std::move(description)),
      schema_(std::move(schema)) {}
  const std::string& name() const override { return name_; }
  const std::string& description() const override { return description_; }
  const std::string& schema() const override { return schema_; }
  risk_class risk() const override { return risk_class::read_only; }
  bool idempotent() const override { return true; }
  bool blocking() const override { return true; }
  std::chrono::milliseconds timeout() const override {
    return std::chrono::milliseconds{srv_->cfg().timeout_ms * queries() + 1000};
  }

 protected:
  /// `data` of the response, or the failed result.
  expected<rapidjson::Document> fetch(const std::string& path, const params& ps) const {
    return srv_->get(name_, path, ps);
  }
  [[nodiscard]] const server& srv() const { return *srv_; }
  /// The most requests one call makes.
  [[nodiscard]] virtual std::int64_t queries() const { return 1; }

 private:
  std::shared_ptr<const server> srv_;
  std::string name_, description_, schema_;
};

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

/// An instant or range query: resultType, the series (capped), their count and whether
/// anything was cut. The instant one also describes an entity for the reasoner from the
/// `prometheus.entities` mapping (`{"entity", "kind"}` instead of `query`: entity.hpp).
class query_tool final : public prom_tool {
 public:
  query_tool(std::shared_ptr<const server> s, bool range)
    : prom_tool(std::move(s), range ? "prometheus.query_range" : "prometheus.query",
                range ? "Evaluates a PromQL expression over a time range (start, end, step)."
                      : "Evaluates a PromQL expression at one instant (default: now).",
                range
                  ? R"({"type":"object","properties":{"query":{"type":"string","minLength":1,)"
                    R"("maxLength":4096},"start":{"type":["string","number"]},)"
                    R"("end":{"type":["string","number"]},"step":{"type":["string","number"]}},)"
                    R"("required":["query","start","end","step"],"additionalProperties":false})"
                  : R"({"type":"object","properties":{"query":{"type":"string","minLength":1,)"
                    R"("maxLength":4096},"time":{"type":["string","number"]},)"
                    R"("entity":{"type":"string","minLength":1,"maxLength":256},)"
                    R"("kind":{"type":"string","minLength":1,"maxLength":64}},)"
                    R"("additionalProperties":false})"),
      range_(range) {}

  std::vector<obs::capability> provides() const override {
    if (auto c = entity_capability(srv().cfg()); c && !range_)
      return {*c};
    return {};
  }

  obs::observations observe(std::string_view args, std::string_view result) const override {
    auto a = json::parse_object(args);
    if (range_ || !a || arg(*a, "entity").empty())
      return {};
    return observe_entity(result);
  }

  tool_result execute(const tool_call& call) override {
    auto args = json::parse_object(call.args);
    if (!args)
      return tool_result::failure(name() + ": " + args.error().message);
    auto q = arg(*args, "query");
    if (!range_) {
      const bool entity = !arg(*args, "entity").empty();
      if (entity == !q.empty())
        return tool_result::failure(
          name() +
          ": give either `query` (PromQL) or `entity` (with `kind`: the entity "
          "described by the prometheus.entities mapping), not " +
          (entity ? "both" : "neither"));
      if (entity)
        return describe_entity(srv(), name(), *args);
    }
    if (auto why = srv().refuse(q); !why.empty())
      return tool_result::failure(name() + ": " + why);
    params ps{{"query", q}};
    static const std::vector<const char*> range_keys{"start", "end", "step"}, instant_keys{"time"};
    for (const char* k : range_ ? range_keys : instant_keys)
      if (auto v = arg(*args, k); !v.empty())
        ps.emplace_back(k, v);
    auto doc = fetch(range_ ? "/api/v1/query_range" : "/api/v1/query", ps);
    if (!doc)
      return tool_result::failure(doc.error().message);
    return tool_result::success(render(*doc, q));
  }

 private:
  std::string render(const rapidjson::Document& doc, const std::string& q) const {
    const auto& data = member(doc, "data");
    const auto& type = member(data, "resultType");
    const auto& result = member(data, "result");
    const auto max_series = static_cast<std::size_t>(srv().cfg().max_series);
    auto points_left = static_cast<std::size_t>(srv().cfg().max_points);
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

  std::int64_t queries() const override {
    return range_ ? 1 : std::max<std::int64_t>(1, max_entity_queries(srv().cfg()));
  }

  bool range_;
};

/// /api/v1/alerts, /api/v1/targets or /api/v1/series: one list, capped.
class list_tool final : public prom_tool {
 public:
  enum what_t { alerts, targets, series };

  list_tool(std::shared_ptr<const server> s, what_t what)
    : prom_tool(std::move(s), name_of(what), description_of(what), schema_of(what)), what_(what) {}

  tool_result execute(const tool_call& call) override {
    auto args = json::parse_object(call.args);
    if (!args)
      return tool_result::failure(name() + ": " + args.error().message);
    params ps;
    if (what_ == targets) {
      if (auto st = arg(*args, "state"); !st.empty())
        ps.emplace_back("state", st);
    } else if (what_ == series) {
      const auto& match = member(*args, "match");
      for (const auto& m : match.GetArray()) {
        std::string sel = m.GetString();
        if (auto why = srv().refuse(sel); !why.empty())
          return tool_result::failure(name() + ": " + why);
        ps.emplace_back("match[]", sel);
      }
      for (const char* k : {"start", "end"})
        if (auto v = arg(*args, k); !v.empty())
          ps.emplace_back(k, v);
    }
    auto doc = fetch(path_of(what_), ps);
    if (!doc)
      return tool_result::failure(doc.error().message);
    const auto& data = member(*doc, "data");
    const auto max = static_cast<std::size_t>(srv().cfg().max_series);
    rapidjson::StringBuffer buf;
    json::writer w(buf);
    w.StartObject();
    std::size_t n = 0;
    if (what_ == alerts) {
      w.Key("alerts");
      n = capped_array(w, member(data, "alerts"), max);
    } else if (what_ == targets) {
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

 private:
  static std::string name_of(what_t w) {
    return w == alerts    ? "prometheus.alerts"
           : w == targets ? "prometheus.targets"
                          : "prometheus.series";
  }
  static std::string path_of(what_t w) {
    return w == alerts ? "/api/v1/alerts" : w == targets ? "/api/v1/targets" : "/api/v1/series";
  }
  static std::string description_of(what_t w) {
    return w == alerts    ? "The alerts Prometheus's rules have pending or firing."
           : w == targets ? "Prometheus's scrape targets: their health, last error and last scrape."
                          : "The series matching label selectors (match: [\"up{job=...}\"]).";
  }
  static std::string schema_of(what_t w) {
    if (w == alerts)
      return R"({"type":"object","additionalProperties":false})";
    if (w == targets)
      return R"({"type":"object","properties":{"state":{"type":"string","enum":["active",)"
             R"("dropped","any"]}},"additionalProperties":false})";
    return R"({"type":"object","properties":{"match":{"type":"array","minItems":1,"maxItems":20,)"
           R"("items":{"type":"string","minLength":1,"maxLength":4096}},)"
           R"("start":{"type":["string","number"]},"end":{"type":["string","number"]}},)"
           R"("required":["match"],"additionalProperties":false})";
  }

  what_t what_;
};

} // namespace

void add_prometheus_tools(actors::tool_registry& out, const config::prometheus_config& cfg) {
  auto srv = std::make_shared<const server>(cfg);
  out.add(std::make_shared<query_tool>(srv, false));
  out.add(std::make_shared<query_tool>(srv, true));
  out.add(std::make_shared<list_tool>(srv, list_tool::alerts));
  out.add(std::make_shared<list_tool>(srv, list_tool::targets));
  out.add(std::make_shared<list_tool>(srv, list_tool::series));
}

} // namespace sreh::plugins::prometheus
