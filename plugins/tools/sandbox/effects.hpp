#pragma once
// Private: what active faults and herrings do to each entity during one instant, before the
// effects are propagated along the call graph and turned into metrics.

#include <optional>
#include <string>
#include <vector>

#include "plugins/tools/sandbox/state.hpp"

namespace sreh::plugins::sandbox {

struct service_effect {
  double error = 0;         // added to error_rate; propagates to callers
  double latency_mult = 1;  // on the baseline p99; the excess propagates to callers
  double latency_add = 0;   // ms; propagates to callers
  double local_latency = 1; // multiplier that does not propagate (herring: slow off-path)
  double cpu_mult = 1;      // cpu and rps do not propagate
  double rps_mult = 1;
  std::optional<double> memory;
  std::optional<double> connections;
  double slow_queries = 0;
  int oom_restarts = 0;
};

struct host_effect {
  bool disk_full = false;
  double xid_errors = 0;
  double ecc_errors = 0;
  bool gpu_broken = false;
};

struct job_effect {
  bool stalled = false;
};

struct effects {
  std::map<std::string, service_effect, std::less<>> services;
  std::map<std::string, host_effect, std::less<>> hosts;
  std::map<std::string, job_effect, std::less<>> jobs;
  std::map<std::string, std::vector<issue>, std::less<>> issues;

  void say(const std::string& entity, log_level l, std::string msg, int per_minute = 2) {
    issues[entity].push_back({l, std::move(msg), per_minute});
  }
};

/// Adds the effects of every fault and herring active at `t` given the replayed state `L`.
void apply_faults(const world::state& st, const live_state& L, std::int64_t t, effects& out);

} // namespace sreh::plugins::sandbox
