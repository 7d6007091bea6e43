#pragma once
// `prometheus.query {"entity", "kind"}`: an entity described for the reasoner from PromQL. The
// node's `prometheus.entities` maps the reasoner's metric names of each entity kind to PromQL
// with `$entity` for the entity's name (docs/prometheus.md); a call evaluates every metric of
// the entity's kind now and its baseline, and the result reads back as a `metric_sample`, the
// observation the sandbox's describe tools produce. No service names here: they come from the
// world state and the config.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "actors/tools/tool.hpp"
#include "plugins/sre/prometheus/server.hpp"

namespace sreh::plugins::prometheus {

/// `describe` over the kinds the mapping names (arguments `entity` and `kind`); none when the
/// config maps no kind.
[[nodiscard]] std::optional<obs::capability> entity_capability(const settings& c);

/// The most queries one description makes (a metric and its baseline each count), for the
/// tool's timeout.
[[nodiscard]] std::size_t max_entity_queries(const settings& c);

/// Describes `args.entity` of `args.kind` (default: the only kind mapped, else `service`):
/// `{"entity", "kind", "current": {metric: v}, "baseline": {..}, "fields": {..}, "settle_ms",
/// "queries":
/// {metric: {"query", "baseline"?}}, "missing": [metrics with no sample], "notes": [..]}`. A
/// query Prometheus refuses or cannot answer fails the call, naming the mapping entry; so does
/// an entity none of whose queries returns a sample (Prometheus does not know it).
[[nodiscard]] actors::tool_result describe_entity(const server& srv, const std::string& tool,
                                                  const rapidjson::Value& args);

/// The `metric_sample` of a description's result (nothing for another result).
[[nodiscard]] obs::observations observe_entity(std::string_view result);

/// `$entity` of `promql` replaced by `name` as the body of a PromQL string literal.
[[nodiscard]] std::string expand_entity(const std::string& promql, std::string_view name);

} // namespace sreh::plugins::prometheus
