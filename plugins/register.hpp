#pragma once
// The plugins' way into a node: each plugin adds what it offers to the registries that lower
// layers own (model providers, toolsets, routes, kinds of Work, config sections), and the
// composition root (app/serve) calls these once at start. Nothing below plugins/ includes a
// plugin.

#include "actors/gateway/provider_registry.hpp"
#include "actors/tools/toolset_registry.hpp"
#include "core/works/kinds.hpp"
#include "net/http/http_server.hpp"
#include "plugins/sections.hpp" // the config sections' register functions

namespace sreh::plugins {

/// `model.provider: builtin`: the abductive reasoner over `model.kb` or the embedded knowledge
/// base (plugins/models/builtin).
void register_builtin_reasoner(actors::provider_registry& r);

/// `tools.testkit: true`: test.echo, test.record, test.sleep, ... (plugins/tools/testkit).
void register_testkit(actors::toolset_registry& r);

/// `sandbox.scenario: FILE`: the sandbox world's read and write tools over a fresh world of the
/// scenario (plugins/tools/sandbox); its banner line names the scenario, alert and goal.
void register_sandbox(actors::toolset_registry& r);

/// `sandbox.scenario: FILE`: GET /sandbox/metrics, the sandbox world as a Prometheus exporter
/// (every entity's metrics and baselines, for the live demo's Prometheus to scrape).
void register_sandbox_routes(std::vector<net::route_group>& routes);

/// `prometheus.url: http://host:port`: prometheus.query, query_range, alerts, targets, series
/// over that server's HTTP API (plugins/sre/prometheus).
void register_prometheus(actors::toolset_registry& r);

/// `tools.http_probe.allow: [hosts]`: http.probe, one HTTP request reported as an observation
/// (plugins/sre/probe).
void register_http_probe(actors::toolset_registry& r);

/// `tools.shell.commands`: shell.NAME for each allow-listed command, no shell in between
/// (plugins/sre/shell).
void register_shell(actors::toolset_registry& r);

/// `alertmanager.url: http://host:port`: alertmanager.alerts and alertmanager.silence
/// (plugins/sre/alertmanager).
void register_alertmanager_tools(actors::toolset_registry& r);

/// The SRE work extension: an `incident` template declares its severity (a choice) and a
/// `change` template its rollback plan (plugins/sre/work_kinds.cpp).
void register_sre_work_kinds(works::kind_registry& kinds);

/// `alertmanager.receiver.template: NAME`: POST /v1/alerts/alertmanager, Alertmanager's webhook
/// receiver, opening and updating incident Works (plugins/sre/alertmanager).
void register_alertmanager(std::vector<net::route_group>& routes);

} // namespace sreh::plugins
