#pragma once
// `prometheus:`, the node config's section of the Prometheus toolset (docs/prometheus.md): on
// when `url` is set. Registered by register_prometheus_section (plugins/sections.hpp).

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace sreh::plugins::prometheus {

struct settings {
  static constexpr std::string_view section = "prometheus";
  std::string url; // http://host:port[/prefix] (may use ${ENV}); "" = no Prometheus tools
  std::string host;
  std::uint16_t port = 0;
  std::string path_prefix; // "" or "/prefix", without a trailing slash
  std::int64_t timeout_ms = 10'000;
  std::int64_t max_series = 100;    // series a result keeps (the rest: "truncated")
  std::int64_t max_points = 10'000; // points of a range query over all its series
  std::vector<std::string> allow;   // PromQL a query must match (one regex of these; none = any)
  std::vector<std::string> deny;    // PromQL no query may match
  /// The reasoner's metrics of an entity kind (`entities.KIND`), each a PromQL expression with
  /// `$entity` for the entity's name: with any, `prometheus.query {"entity", "kind"}` describes
  /// an entity for the reasoner (docs/prometheus.md).
  struct promql_metric {
    std::string query;
    std::string baseline; // the metric's usual value; "" = `baseline` below with $query
  };
  struct entity_mapping {
    std::map<std::string, promql_metric> metrics; // reasoner metric → PromQL
    std::map<std::string, std::string> fields;    // numeric state (replicas, ...) → PromQL
  };
  std::map<std::string, entity_mapping> entities; // by kind: service, database, ..., host, job
  /// The baseline of a metric without its own: `$query` stands for the metric's expression;
  /// "" = no baseline.
  std::string baseline = "avg_over_time(($query)[1h:1m] offset 1d)";
  /// How long after an action the entity metrics can show its effect (`settle`): the reasoner
  /// verifies a remedy on samples taken no sooner. Unset: the longest range of the entity
  /// queries (`rate(...[5m])`: 5 min), else 30 s (a few scrape intervals).
  std::int64_t settle_ms = 30'000;
};

} // namespace sreh::plugins::prometheus
