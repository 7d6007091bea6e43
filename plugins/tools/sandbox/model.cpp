#include "plugins/tools/sandbox/model.hpp"

#include <algorithm>
#include <cctype>

namespace sreh::plugins::sandbox {

const char* to_string(service_kind k) {
  switch (k) {
  case service_kind::service:
    return "service";
  case service_kind::database:
    return "database";
  case service_kind::cache:
    return "cache";
  case service_kind::queue:
    return "queue";
  }
  return "service";
}

const char* to_string(service_tier t) {
  switch (t) {
  case service_tier::critical:
    return "critical";
  case service_tier::standard:
    return "standard";
  case service_tier::batch:
    return "batch";
  }
  return "standard";
}

const char* to_string(host_kind k) {
  return k == host_kind::gpu ? "gpu" : "vm";
}

const char* to_string(job_kind k) {
  return k == job_kind::inference ? "inference" : "training";
}

const char* to_string(entity_kind k) {
  switch (k) {
  case entity_kind::service:
    return "service";
  case entity_kind::database:
    return "database";
  case entity_kind::cache:
    return "cache";
  case entity_kind::queue:
    return "queue";
  case entity_kind::host:
    return "host";
  case entity_kind::job:
    return "job";
  case entity_kind::flag:
    return "flag";
  }
  return "service";
}

namespace {

constexpr const char* fault_names[] = {
  "bad_deploy",
  "memory_leak",
  "connection_pool_exhaustion",
  "dependency_slowdown",
  "traffic_spike",
  "disk_full",
  "cert_expired",
  "bad_flag",
  "gpu_xid",
  "none",
};

template <class T>
const T* find_named(const std::vector<T>& xs, std::string_view name) {
  auto it = std::find_if(xs.begin(), xs.end(), [&](const T& x) { return x.name == name; });
  return it == xs.end() ? nullptr : &*it;
}

} // namespace

const char* to_string(fault_kind k) {
  return fault_names[static_cast<int>(k)];
}

std::optional<fault_kind> parse_fault_kind(std::string_view s) {
  for (int i = 0; i <= static_cast<int>(fault_kind::none); ++i)
    if (s == fault_names[i])
      return static_cast<fault_kind>(i);
  return std::nullopt;
}

int service::calls_per_request(std::string_view callee) const {
  auto it = per_request.find(callee);
  return it == per_request.end() ? 1 : it->second;
}

const service* world_model::find_service(std::string_view name) const {
  return find_named(services, name);
}

const host* world_model::find_host(std::string_view name) const {
  return find_named(hosts, name);
}

const job* world_model::find_job(std::string_view name) const {
  return find_named(jobs, name);
}

std::optional<entity_kind> world_model::kind_of(std::string_view name) const {
  if (auto* s = find_service(name))
    return static_cast<entity_kind>(static_cast<int>(s->kind)); // same order as service_kind
  if (find_host(name))
    return entity_kind::host;
  if (find_job(name))
    return entity_kind::job;
  if (flags.find(name) != flags.end())
    return entity_kind::flag;
  return std::nullopt;
}

std::vector<std::string> world_model::callers_of(std::string_view name) const {
  std::vector<std::string> out;
  for (const auto& s : services)
    if (contains(s.calls, name))
      out.push_back(s.name);
  return out;
}

std::vector<std::string> world_model::hosts_of(std::string_view name) const {
  std::vector<std::string> out;
  for (const auto& h : hosts)
    if (contains(h.services, name) || contains(h.jobs, name))
      out.push_back(h.name);
  if (auto* j = find_job(name))
    for (const auto& h : j->hosts)
      if (!contains(out, h))
        out.push_back(h);
  return out;
}

const std::vector<std::string>& metric_names(entity_kind k, bool gpu_host) {
  static const std::vector<std::string> service_metrics{"rps", "latency_p99_ms", "error_rate",
                                                        "cpu", "memory",         "restarts"};
  static const std::vector<std::string> db_metrics{"rps",         "latency_p99_ms", "error_rate",
                                                   "cpu",         "memory",         "restarts",
                                                   "connections", "slow_queries"};
  static const std::vector<std::string> host_metrics{"disk_used", "load"};
  static const std::vector<std::string> gpu_metrics{"disk_used", "load", "gpu_util",
                                                    "gpu_ecc_errors", "xid_errors"};
  static const std::vector<std::string> job_metrics{"throughput", "stalled"};
  static const std::vector<std::string> none;
  switch (k) {
  case entity_kind::database:
    return db_metrics;
  case entity_kind::host:
    return gpu_host ? gpu_metrics : host_metrics;
  case entity_kind::job:
    return job_metrics;
  case entity_kind::flag:
    return none;
  default:
    return service_metrics;
  }
}

} // namespace sreh::plugins::sandbox
