// Read-only tools over time series and logs: metrics.query, logs.search.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "plugins/tools/sandbox/expression.hpp"
#include "plugins/tools/sandbox/tools.hpp"

namespace sreh::plugins::sandbox::detail {

namespace {

constexpr std::int64_t max_metric_window = 6 * 3600; // one point a minute: 360 points at most
constexpr std::int64_t max_log_window = 24 * 3600;
constexpr int max_log_lines = 200;

double rounded(double v) {
  return std::round(v * 10000) / 10000;
}

sreh::error unknown_target(const world_model& w, const std::string& name) {
  auto k = w.kind_of(name);
  if (!k)
    return {errc::not_found, fmt::format("unknown service, host or job '{}'", name)};
  return {errc::invalid_argument,
          fmt::format("'{}' is a {}: it has no metrics or logs", name, to_string(*k))};
}

expected<std::string> query_metric(world& w, const rapidjson::Value& args, const std::string&) {
  auto target = string_arg(args, "target");
  auto metric = string_arg(args, "metric");
  auto window = window_arg(args, 1800, max_metric_window);
  if (!window)
    return window.error();
  const auto& model = w.spec().world;
  auto k = model.kind_of(target);
  if (!k || *k == entity_kind::flag)
    return unknown_target(model, target);
  if (auto msg = check_metric(model, target, metric); !msg.empty())
    return sreh::error{errc::invalid_argument, msg};
  auto lock = world_access::lock(w);
  const auto& st = world_access::state(w);
  auto n = std::max<std::int64_t>(1, *window / 60);
  std::vector<std::pair<std::int64_t, double>> points;
  for (auto i = n - 1; i >= 0; --i) {
    auto at = st.now - i * 60;
    points.emplace_back(at, st.frame_at(at).metrics.at(target).at(metric));
  }
  double baseline = 0;
  if (auto* s = model.find_service(target))
    baseline = s->baseline.at(metric);
  else if (auto* h = model.find_host(target))
    baseline = h->baseline.at(metric);
  else
    baseline = model.find_job(target)->baseline.at(metric);
  auto [lo, hi] = std::minmax_element(points.begin(), points.end(),
                                      [](auto& a, auto& b) { return a.second < b.second; });
  rapidjson::StringBuffer buf;
  json::writer out{buf};
  out.StartObject();
  out.Key("target");
  out.String(target.c_str());
  out.Key("metric");
  out.String(metric.c_str());
  for (auto [key, v] : {std::pair{"baseline", baseline}, std::pair{"current", points.back().second},
                        std::pair{"min", lo->second}, std::pair{"max", hi->second}}) {
    out.Key(key);
    out.Double(rounded(v));
  }
  out.Key("points");
  out.StartArray();
  for (const auto& [at, v] : points) {
    out.StartArray();
    out.String(rfc3339(at).c_str());
    out.Double(rounded(v));
    out.EndArray();
  }
  out.EndArray();
  out.EndObject();
  return std::string{buf.GetString()};
}

expected<std::string> search_logs(world& w, const rapidjson::Value& args, const std::string&) {
  log_query q;
  q.entity = string_arg(args, "service");
  auto level = string_arg(args, "level");
  std::transform(level.begin(), level.end(), level.begin(),
                 [](unsigned char c) { return std::toupper(c); });
  if (level == "ERROR")
    q.min_level = log_level::error;
  else if (level == "WARN" || level == "WARNING")
    q.min_level = log_level::warn;
  else if (level == "INFO")
    q.min_level = log_level::info;
  q.text = string_arg(args, "text");
  auto window = window_arg(args, 1800, max_log_window);
  if (!window)
    return window.error();
  q.window = *window;
  int limit = 50;
  if (args.HasMember("limit") && args["limit"].IsInt())
    limit = std::clamp(args["limit"].GetInt(), 1, max_log_lines);
  const auto& model = w.spec().world;
  auto k = model.kind_of(q.entity);
  if (!k || *k == entity_kind::flag)
    return unknown_target(model, q.entity);
  auto lines = w.logs(q);
  if (!lines)
    return lines.error();
  rapidjson::StringBuffer buf;
  json::writer out{buf};
  out.StartObject();
  out.Key("service");
  out.String(q.entity.c_str());
  out.Key("total");
  out.Uint64(lines->size());
  out.Key("lines");
  out.StartArray();
  for (std::size_t i = 0; i < lines->size() && i < static_cast<std::size_t>(limit); ++i) {
    const auto& l = (*lines)[i];
    out.StartObject();
    out.Key("at");
    out.String(rfc3339(l.at).c_str());
    out.Key("level");
    out.String(to_string(l.level));
    out.Key("service");
    out.String(l.service.c_str());
    out.Key("message");
    out.String(l.message.c_str());
    out.EndObject();
  }
  out.EndArray();
  out.EndObject();
  return std::string{buf.GetString()};
}

} // namespace

void add_observe_tools(actors::tool_registry& reg, const world_ptr& w) {
  reg.add(sandbox_tool(
    "metrics.query",
    "A metric of a service, host or job over a window (one point a minute): baseline, current, "
    "min, max, points.",
    R"({"type":"object","properties":{"target":{"type":"string","minLength":1,"maxLength":128},)"
    R"("metric":{"type":"string","enum":["rps","latency_p99_ms","error_rate","cpu","memory",)"
    R"("restarts","connections","slow_queries","disk_used","load","gpu_util","gpu_ecc_errors",)"
    R"("xid_errors","throughput","stalled"]},"window":{"type":"string","minLength":2,)"
    R"("maxLength":16}},"required":["target","metric"],"additionalProperties":false})",
    actors::risk_class::read_only, w, query_metric));
  reg.add(sandbox_tool(
    "logs.search",
    "Log lines of a service, host or job, newest first; level is a minimum (WARN includes "
    "ERROR); text is a case-insensitive substring.",
    R"({"type":"object","properties":{"service":{"type":"string","minLength":1,"maxLength":128},)"
    R"("level":{"type":"string","enum":["INFO","WARN","ERROR","info","warn","error"]},)"
    R"("text":{"type":"string","maxLength":200},"window":{"type":"string","minLength":2,)"
    R"("maxLength":16},"limit":{"type":"integer","minimum":1,"maximum":200}},)"
    R"("required":["service"],"additionalProperties":false})",
    actors::risk_class::read_only, w, search_logs));
}

} // namespace sreh::plugins::sandbox::detail
