#pragma once
// Private to the sandbox: the world's state, its replay at a point in simulated time, and the
// computed frame (metrics and log-worthy issues) of one minute. Nothing here locks: callers hold
// the world's mutex (see detail::world_access).

#include <climits>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "plugins/tools/sandbox/world.hpp"

namespace sreh::plugins::sandbox {

inline constexpr std::int64_t never = INT64_MIN / 2;

/// A change of version, as deploys.list shows it.
struct version_change {
  std::string service, version, previous, by;
  std::int64_t at = 0;   // Unix seconds
  bool rollback = false; // a deploy.rollback: it restored `version`, it released nothing
};

struct service_live {
  int replicas = 1;
  std::string version;
  int max_connections = 0;
  std::int64_t restarted_at = never;
  int restarts = 0; // operator restarts
  std::int64_t cert_rotated_at = never;
};

struct host_live {
  bool cordoned = false;
  bool drained = false;
  std::int64_t drained_at = never;
  std::int64_t cleaned_at = never;
};

struct job_live {
  std::vector<std::string> hosts;
  std::int64_t restarted_at = never;
};

struct flag_live {
  bool value = false;
  std::int64_t changed_at = never;
  std::string changed_by;
};

/// The mutable side of the world at one instant: the model plus every timeline event (history
/// deploys, faults that change state, herring deploys, actions) at or before that instant.
struct live_state {
  std::map<std::string, service_live, std::less<>> services;
  std::map<std::string, host_live, std::less<>> hosts;
  std::map<std::string, job_live, std::less<>> jobs;
  std::map<std::string, flag_live, std::less<>> flags;
  std::vector<version_change> deploys; // oldest first
};

/// A log-worthy condition of an entity during one minute.
struct issue {
  log_level level = log_level::warn;
  std::string message;
  int per_minute = 2;
};

/// Everything computed for one instant.
struct frame {
  std::int64_t at = 0;
  std::map<std::string, metric_map, std::less<>> metrics; // services, hosts, jobs
  std::map<std::string, std::vector<issue>, std::less<>> issues;
};

struct world::state {
  std::shared_ptr<const scenario> spec;
  std::int64_t now = epoch;
  std::vector<action_record> log; // in the order applied
  /// The results of actions a reset forgot, by key: a key seen before a reset still applies
  /// once (a retried call answers the same) and reconciles as having happened.
  std::map<std::string, std::string, std::less<>> forgotten;
  std::int64_t resets = 0;
  /// The state at each fault's start, that remedies are judged against (by fault index).
  std::vector<live_state> at_fault;

  [[nodiscard]] live_state live_at(std::int64_t t) const;
  [[nodiscard]] frame frame_at(std::int64_t t) const;
  [[nodiscard]] std::vector<log_line> logs_at_minute(std::int64_t minute_start,
                                                     const std::string& entity) const;
};

/// Fault `f` begins at this Unix second.
[[nodiscard]] inline std::int64_t start_of(std::int64_t at) {
  return epoch + at;
}

/// A deterministic hash of the inputs, for seeded noise and log choices.
[[nodiscard]] std::uint64_t mix(std::uint64_t seed, std::string_view a, std::int64_t b,
                                std::string_view c = {});
/// A number in [-1, 1] from `mix`.
[[nodiscard]] double unit_noise(std::uint64_t h);

/// The previous version of `v` when nothing better is known: v2.4.1 → v2.4.0, v1.8.0 → v1.7.0.
[[nodiscard]] std::string guess_previous(const std::string& v);

/// RFC 3339 of Unix seconds.
[[nodiscard]] std::string rfc3339(std::int64_t t);

namespace detail {

/// How the tools reach the world's state: lock, then use the state.
struct world_access {
  static std::unique_lock<std::mutex> lock(const world& w) {
    return std::unique_lock<std::mutex>{w.mtx_};
  }
  static world::state& state(world& w) { return *w.state_; }
  static const world::state& state(const world& w) { return *w.state_; }
};

/// The world now in the Prometheus text format (exporter.cpp).
[[nodiscard]] std::string exposition(const world& w);

} // namespace detail

} // namespace sreh::plugins::sandbox
