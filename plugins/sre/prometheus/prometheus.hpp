#pragma once
// The Prometheus toolset (docs/prometheus.md): read-only, idempotent tools over the Prometheus
// HTTP API (/api/v1/query, query_range, alerts, targets, series) with a timeout, caps on series
// and points, Prometheus's errorType mapped to a clear tool error, and a PromQL allow/deny list.

#include "actors/tools/tool.hpp"
#include "plugins/sre/prometheus/settings.hpp"

namespace sreh::plugins::prometheus {

/// Adds prometheus.query, prometheus.query_range, prometheus.alerts, prometheus.targets and
/// prometheus.series for the server of `cfg` (its url must be set).
void add_prometheus_tools(actors::tool_registry& out, const settings& cfg);

} // namespace sreh::plugins::prometheus
