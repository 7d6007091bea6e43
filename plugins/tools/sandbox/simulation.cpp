// Metrics of one instant: baselines, fault effects propagated to callers, seeded noise.
#include <algorithm>
#include <cmath>
#include <set>

#include "plugins/tools/sandbox/effects.hpp"

namespace sreh::plugins::sandbox {

namespace {

constexpr double error_attenuation = 0.6;   // share of a callee's extra errors a caller sees
constexpr double latency_attenuation = 0.8; // share of a callee's extra p99 a caller sees

/// Extra error rate and latency of each service, its callees' included: a caller sees a share of
/// each callee's excess, once per call the edge makes per request.
class propagation {
 public:
  propagation(const world_model& w, const effects& fx) : w_(w), fx_(fx) {}

  struct excess {
    double error = 0;
    double latency = 0;
  };

  excess of(const std::string& name) {
    if (auto it = memo_.find(name); it != memo_.end())
      return it->second;
    if (!visiting_.insert(name).second)
      return {}; // a call cycle: count each edge once
    const auto& s = *w_.find_service(name);
    excess e;
    if (auto it = fx_.services.find(name); it != fx_.services.end()) {
      e.error = it->second.error;
      e.latency =
        s.baseline.at("latency_p99_ms") * (it->second.latency_mult - 1) + it->second.latency_add;
    }
    for (const auto& callee : s.calls) {
      auto c = of(callee);
      auto n = s.calls_per_request(callee);
      // n calls in a row: each adds the callee's extra latency, and the request fails when any
      // of them does (1 - (1 - p)^n, which is p for a single call and never above 1).
      auto failed = n == 1 ? c.error : 1 - std::pow(1 - std::clamp(c.error, 0.0, 1.0), n);
      e.error += error_attenuation * failed;
      e.latency += latency_attenuation * n * c.latency;
    }
    visiting_.erase(name);
    return memo_[name] = e;
  }

 private:
  const world_model& w_;
  const effects& fx_;
  std::map<std::string, excess> memo_;
  std::set<std::string> visiting_;
};

struct noise {
  std::uint64_t seed;
  std::int64_t minute;
  /// `v` scaled by 1 ± `spread`, the same for the same (seed, entity, metric, minute).
  double operator()(std::string_view entity, std::string_view metric, double v,
                    double spread) const {
    return v * (1 + spread * unit_noise(mix(seed, entity, minute, metric)));
  }
};

double clamp01(double v) {
  return std::clamp(v, 0.0, 1.0);
}

metric_map service_metrics(const service& s, const service_live& live, const service_effect& fx,
                           const propagation::excess& ex, const noise& n) {
  const auto& b = s.baseline;
  metric_map m;
  m["rps"] = n(s.name, "rps", b.at("rps") * fx.rps_mult, 0.03);
  auto latency = (b.at("latency_p99_ms") + ex.latency) * fx.local_latency;
  m["latency_p99_ms"] = n(s.name, "latency_p99_ms", latency, 0.04);
  m["error_rate"] = clamp01(n(s.name, "error_rate", b.at("error_rate") + ex.error, 0.1));
  auto cpu = b.at("cpu") * s.replicas / live.replicas * fx.cpu_mult;
  m["cpu"] = std::min(0.99, n(s.name, "cpu", cpu, 0.03));
  m["memory"] = clamp01(fx.memory ? *fx.memory : n(s.name, "memory", b.at("memory"), 0.02));
  m["restarts"] = b.at("restarts") + live.restarts + fx.oom_restarts;
  if (s.kind == service_kind::database) {
    m["connections"] = fx.connections
                         ? *fx.connections
                         : std::round(n(s.name, "connections", b.at("connections"), 0.05));
    m["slow_queries"] = b.at("slow_queries") + fx.slow_queries;
  }
  return m;
}

metric_map host_metrics(const world_model& w, const host& h, const host_live& live,
                        const host_effect& fx, const frame& fr, const noise& n) {
  const auto& b = h.baseline;
  metric_map m;
  m["disk_used"] = fx.disk_full ? 0.99 : clamp01(n(h.name, "disk_used", b.at("disk_used"), 0.01));
  double ratio = live.drained ? 0.1 : 1.0; // load follows the cpu of what runs on the host
  if (!h.services.empty() && !live.drained) {
    ratio = 0;
    for (const auto& s : h.services)
      ratio += fr.metrics.at(s).at("cpu") / std::max(0.01, w.find_service(s)->baseline.at("cpu"));
    ratio /= static_cast<double>(h.services.size());
  }
  m["load"] = n(h.name, "load", b.at("load") * ratio, 0.05);
  if (h.kind == host_kind::gpu) {
    auto util = live.drained ? 0.0 : fx.gpu_broken ? 0.02 : b.at("gpu_util");
    m["gpu_util"] = clamp01(n(h.name, "gpu_util", util, 0.03));
    m["gpu_ecc_errors"] = b.at("gpu_ecc_errors") + fx.ecc_errors;
    m["xid_errors"] = b.at("xid_errors") + fx.xid_errors;
  }
  return m;
}

} // namespace

frame world::state::frame_at(std::int64_t t) const {
  const auto& w = spec->world;
  auto L = live_at(t);
  effects fx;
  apply_faults(*this, L, t, fx);
  frame fr;
  fr.at = t;
  noise n{spec->seed, t / 60};
  propagation prop{w, fx};
  static const service_effect no_effect;
  for (const auto& s : w.services) {
    auto it = fx.services.find(s.name);
    fr.metrics[s.name] =
      service_metrics(s, L.services.at(s.name), it == fx.services.end() ? no_effect : it->second,
                      prop.of(s.name), n);
  }
  static const host_effect no_host_effect;
  for (const auto& h : w.hosts) {
    auto it = fx.hosts.find(h.name);
    fr.metrics[h.name] = host_metrics(w, h, L.hosts.at(h.name),
                                      it == fx.hosts.end() ? no_host_effect : it->second, fr, n);
  }
  for (const auto& j : w.jobs) {
    const auto& live = L.jobs.at(j.name);
    auto it = fx.jobs.find(j.name);
    bool stalled = live.hosts.empty() || (it != fx.jobs.end() && it->second.stalled);
    auto expected_hosts = std::max<std::size_t>(1, w.hosts_of(j.name).size());
    auto share = std::min(1.0, static_cast<double>(live.hosts.size()) / expected_hosts);
    auto base = j.baseline.at("throughput");
    fr.metrics[j.name]["throughput"] =
      std::max(0.0, n(j.name, "throughput", stalled ? base * 0.03 : base * share, 0.02));
    fr.metrics[j.name]["stalled"] = stalled ? 1 : 0;
  }
  fr.issues = std::move(fx.issues);
  return fr;
}

} // namespace sreh::plugins::sandbox
