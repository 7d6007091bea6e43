#pragma once
// Shared by the sandbox_* suites: a small inline world and helpers to build worlds from it.

#include <filesystem>
#include <memory>
#include <string>

#include "plugins/tools/sandbox/scenario.hpp"
#include "plugins/tools/sandbox/world.hpp"

namespace sandbox_fixture {

namespace sb = sreh::plugins::sandbox;

/// web → api → {db, cache}; worker → db; `other` is off every path. vm1 runs web and api, vm2
/// the rest; train runs on GPU host g1, g2 is spare.
inline const char* inline_world = R"(world:
  world: t
  services:
    - {name: web, replicas: 2, calls: [api], baseline: {rps: 100, latency_p99_ms: 100, error_rate: 0.001, cpu: 0.3, memory: 0.4}}
    - {name: api, replicas: 2, version: v1.2.3, calls: [db, cache], baseline: {rps: 100, latency_p99_ms: 100, error_rate: 0.001, cpu: 0.3, memory: 0.4}}
    - {name: worker, calls: [db]}
    - {name: db, kind: database, max_connections: 100, baseline: {connections: 20, latency_p99_ms: 5}}
    - {name: cache, kind: cache}
    - {name: other, baseline: {latency_p99_ms: 100}}
  hosts:
    - {name: vm1, services: [web, api]}
    - {name: vm2, services: [worker, db, cache, other]}
    - {name: g1, kind: gpu, jobs: [train]}
    - {name: g2, kind: gpu}
  jobs:
    - {name: train, gpus: 8, hosts: [g1]}
  flags: {beta: false}
)";

/// A scenario over the inline world with `faults` (YAML list items, one per line).
inline std::string scenario_text(const std::string& faults, std::uint64_t seed = 1,
                                 const std::string& herrings = "") {
  std::string s = "scenario: t\n";
  s += inline_world;
  s += "seed: " + std::to_string(seed) + "\nfaults:\n" + faults;
  if (!herrings.empty())
    s += "herrings:\n" + herrings;
  s += "alert: {name: HighErrorRate, labels: {service: web}}\ngoal: fix it\n"
       "expect: {detected: true}\n";
  return s;
}

/// A world over the inline world, or nullptr (the error is printed) when it does not load.
inline std::shared_ptr<sb::world> make_world(const std::string& faults, std::uint64_t seed = 1,
                                             const std::string& herrings = "") {
  auto sc = sb::load_scenario_string(scenario_text(faults, seed, herrings), "inline.yaml");
  if (!sc) {
    std::fprintf(stderr, "scenario failed to load: %s\n", sc.error().message.c_str());
    return nullptr;
  }
  return std::make_shared<sb::world>(std::move(*sc));
}

/// The metric now, or -1 when it does not exist.
inline double m(const sb::world& w, const char* entity, const char* metric) {
  auto v = w.metric(entity, metric);
  return v ? *v : -1;
}

/// Applies an action with a fresh key; true when it succeeded.
inline bool act(sb::world& w, sb::action a) {
  static int n = 0;
  return w.apply("key-" + std::to_string(++n), a).has_value();
}

/// Does any log line of `entity` in the last 10 minutes contain `text`?
inline bool logged(const sb::world& w, const std::string& entity, const std::string& text) {
  sb::log_query q;
  q.entity = entity;
  q.text = text;
  q.window = 600;
  auto lines = w.logs(q);
  return lines && !lines->empty();
}

/// The repository's root, from this file's path.
inline std::filesystem::path source_dir() {
  return std::filesystem::path{SREH_SOURCE_DIR};
}

} // namespace sandbox_fixture
