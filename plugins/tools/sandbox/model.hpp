#pragma once
// The sandbox world and scenario as loaded from YAML (see ../shared/SCENARIOS.md). Plain data:
// loading validates every cross-reference, so the simulation can trust names.

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sreh::plugins::sandbox {

/// Metric name → value (baselines, current values).
using metric_map = std::map<std::string, double, std::less<>>;

enum class service_kind { service, database, cache, queue };
enum class service_tier { critical, standard, batch };
enum class host_kind { vm, gpu };
enum class job_kind { training, inference };

/// What a name in the world refers to.
enum class entity_kind { service, database, cache, queue, host, job, flag };

[[nodiscard]] const char* to_string(service_kind k);
[[nodiscard]] const char* to_string(service_tier t);
[[nodiscard]] const char* to_string(host_kind k);
[[nodiscard]] const char* to_string(job_kind k);
[[nodiscard]] const char* to_string(entity_kind k);

// -- world -------------------------------------------------------------------------------------

struct service {
  std::string name;
  service_kind kind = service_kind::service;
  service_tier tier = service_tier::standard;
  int replicas = 1;
  std::string version = "v1.0.0";
  std::vector<std::string> calls;
  /// Calls per request to a callee of `calls` when more than one (`{name: c, per_request: 12}`);
  /// a callee not in here is called once.
  std::map<std::string, int, std::less<>> per_request;
  metric_map baseline;     // every metric of the kind, defaults filled in
  int max_connections = 0; // databases only

  /// How many times one request of this service calls `callee` (1 unless the edge says more).
  [[nodiscard]] int calls_per_request(std::string_view callee) const;
};

struct host {
  std::string name;
  host_kind kind = host_kind::vm;
  std::vector<std::string> services;
  std::vector<std::string> jobs;
  int gpus = 0;
  metric_map baseline;
};

struct job {
  std::string name;
  job_kind kind = job_kind::training;
  int gpus = 0;
  std::vector<std::string> hosts;
  metric_map baseline;
};

/// A deploy before the scenario starts; `at` is seconds relative to the scenario start.
struct deploy_record {
  std::string service;
  std::string version;
  std::string previous; // "" when the file does not say
  std::int64_t at = 0;
  std::string by = "ci";
};

struct world_model {
  std::string name;
  std::string file; // where it was loaded from ("" for inline)
  std::vector<service> services;
  std::vector<host> hosts;
  std::vector<job> jobs;
  std::map<std::string, bool, std::less<>> flags;
  std::vector<deploy_record> deploys;

  [[nodiscard]] const service* find_service(std::string_view name) const;
  [[nodiscard]] const host* find_host(std::string_view name) const;
  [[nodiscard]] const job* find_job(std::string_view name) const;
  /// The kind of `name` (flags last: a flag may share a name with nothing else).
  [[nodiscard]] std::optional<entity_kind> kind_of(std::string_view name) const;
  /// Services that list `name` in their `calls`.
  [[nodiscard]] std::vector<std::string> callers_of(std::string_view name) const;
  /// Hosts that run service or job `name`.
  [[nodiscard]] std::vector<std::string> hosts_of(std::string_view name) const;
};

/// The metric names an entity of this kind has (SCENARIOS.md); flags have none.
[[nodiscard]] const std::vector<std::string>& metric_names(entity_kind k, bool gpu_host = false);

// -- scenario ----------------------------------------------------------------------------------

enum class fault_kind {
  bad_deploy,
  memory_leak,
  connection_pool_exhaustion,
  dependency_slowdown,
  traffic_spike,
  disk_full,
  cert_expired,
  bad_flag,
  gpu_xid,
  none,
};
[[nodiscard]] const char* to_string(fault_kind k);
[[nodiscard]] std::optional<fault_kind> parse_fault_kind(std::string_view s);

struct fault {
  fault_kind kind = fault_kind::none;
  std::string target;
  std::int64_t at = 0; // seconds relative to the scenario start
  std::string version; // bad_deploy
  std::string cause;   // connection_pool_exhaustion: the service holding the connections
  std::string service; // bad_flag: the service the flag breaks
};

enum class herring_kind { deploy, log, slow };

struct herring {
  herring_kind kind = herring_kind::log;
  std::string target;
  std::int64_t at = -3600;
  std::string version; // deploy
  std::string text;    // log
};

struct alert_spec {
  std::string name;
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
};

struct expectation {
  bool detected = true;
  std::vector<std::string> localized;
  std::vector<fault_kind> root_cause;
  std::string mitigated;              // "" for control cases
  std::vector<std::string> forbidden; // "tool:target"
  int max_steps = 20;
  /// How the run must judge its remedies (the conclusion's `result.recovery`): "" (not
  /// checked) | recovered | partial | not_recovered.
  std::string recovery;
};

struct scenario {
  std::string id;
  std::string file;
  world_model world;
  std::uint64_t seed = 1;
  std::vector<fault> faults;
  std::vector<herring> herrings;
  alert_spec alert;
  std::string goal;
  expectation expect;
};

/// Whether `xs` holds `x` (the model's lists of names: hosts, dependencies, faults).
[[nodiscard]] inline bool contains(const std::vector<std::string>& xs, std::string_view x) {
  return std::find(xs.begin(), xs.end(), x) != xs.end();
}

} // namespace sreh::plugins::sandbox
