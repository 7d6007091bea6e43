#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "actors/tools/tool.hpp"
#include "core/base/expected.hpp"
#include "plugins/tools/sandbox/model.hpp"

namespace sreh::plugins::sandbox {

/// Simulated time of every scenario start: 2024-05-14T12:00:00Z, in Unix seconds.
inline constexpr std::int64_t epoch = 1'715'688'000;

/// What every tool call costs in simulated time, so "time to mitigate" is measurable.
inline constexpr std::int64_t seconds_per_call = 30;

enum class action_kind {
  rollback,       // deploy.rollback {service, to_version?}
  restart,        // service.restart {service}
  scale,          // service.scale {service, replicas}
  set_pool_limit, // db.set_pool_limit {database, limit}
  cleanup_disk,   // host.cleanup_disk {host}
  rotate_cert,    // cert.rotate {service}
  set_flag,       // flag.set {flag, value}
  cordon,         // host.cordon {host}
  uncordon,       // compensation of cordon
  drain,          // host.drain {host}
  restart_job,    // job.restart {job, exclude_hosts?}
};
[[nodiscard]] const char* to_string(action_kind k);
/// The tool name that performs `k` ("deploy.rollback", ...).
[[nodiscard]] const char* tool_name(action_kind k);

/// One mutating action on the world.
struct action {
  action_kind kind = action_kind::restart;
  std::string target;
  std::string version;                    // rollback: explicit version
  int number = 0;                         // scale: replicas; set_pool_limit: limit
  bool value = false;                     // set_flag
  std::vector<std::string> exclude_hosts; // restart_job
};

/// An applied action, as the action log keeps it.
struct action_record {
  std::string key; // the call's idempotency key
  action act;
  std::int64_t at = 0;                // simulated Unix seconds
  std::string result;                 // the tool result JSON
  std::string undone_by;              // key of the compensating action, if any
  std::optional<action> compensation; // what undo() applies; none when it cannot be undone
};

enum class log_level { info, warn, error };
[[nodiscard]] const char* to_string(log_level l);

struct log_line {
  std::int64_t at = 0; // Unix seconds
  log_level level = log_level::info;
  std::string service; // the entity that printed it
  std::string message;
};

struct log_query {
  std::string entity;                 // service, host or job
  std::optional<log_level> min_level; // lines at this level or above
  std::string text;                   // case-insensitive substring
  std::int64_t window = 1800;         // seconds before now
};

namespace detail {
struct world_access; // the tools' way in (plugins/tools/sandbox/state.hpp)
} // namespace detail

/// A deterministic simulation of production: a loaded scenario, its simulated clock and the log of
/// actions taken on it. Metrics and logs are functions of (baseline, faults, herrings, actions,
/// time, seed); the same scenario with the same actions gives the same values.
///
/// Thread-safe: one mutex guards the whole world, so tool calls from concurrent runs on one world
/// are serialized (each sees the effect of the ones before it). Calls are cheap (a few ms at most
/// for two-hour windows over a dozen services), so the lock is never held long.
class world {
 public:
  explicit world(scenario sc);
  ~world();
  world(const world&) = delete;
  world& operator=(const world&) = delete;

  /// Wall milliseconds each tool call takes (`sandbox.call_delay_ms`: to watch, steer or crash a
  /// run while it works); 0 = none. Set before the tools are made.
  std::int64_t call_delay_ms = 0;

  // -- time ------------------------------------------------------------------------------------

  /// Current simulated time (Unix seconds); starts at `epoch`.
  [[nodiscard]] std::int64_t now() const;
  void advance(std::int64_t seconds);

  // -- observation -----------------------------------------------------------------------------

  [[nodiscard]] const scenario& spec() const { return *spec_; }
  /// The value of `metric` of `entity` now (or at `at`); errors name the unknown entity/metric.
  [[nodiscard]] expected<double> metric(std::string_view entity, std::string_view metric) const;
  [[nodiscard]] expected<double> metric_at(std::string_view entity, std::string_view metric,
                                           std::int64_t at) const;
  /// Every metric of `entity` now.
  [[nodiscard]] expected<metric_map> metrics(std::string_view entity) const;
  /// Matching lines, newest first.
  [[nodiscard]] expected<std::vector<log_line>> logs(const log_query& q) const;
  /// Evaluates a `mitigated` expression now: `<entity>.<metric> <op> <number>` joined with
  /// `and`/`or` (`and` binds tighter; parentheses group).
  [[nodiscard]] expected<bool> evaluate(std::string_view expr) const;

  // -- actions ---------------------------------------------------------------------------------

  /// Applies `a` at the current time and records it under `key` (required). A key seen before
  /// applies nothing and returns the recorded result. Returns the tool result JSON.
  [[nodiscard]] expected<std::string> apply(std::string_view key, const action& a);
  /// Did the action with `key` happen? With its recorded result.
  [[nodiscard]] actors::reconcile_result reconcile(std::string_view key) const;
  /// Compensates the action recorded under `key` (rollback ↔ redeploy, scale ↔ scale back,
  /// flag.set ↔ set back, cordon ↔ uncordon); restarts, cleanups, rotations, drains and job
  /// restarts cannot be undone. Returns the compensating action's result.
  [[nodiscard]] expected<std::string> undo(std::string_view key);
  [[nodiscard]] std::vector<action_record> actions() const;
  /// Puts the world back as its scenario has it now, as if no action had been taken: every
  /// fault that has begun is in effect again. Time goes on (world state never goes back); the
  /// actions' keys are remembered, so a call retried after the reset is not applied again.
  /// Returns how many actions it forgot.
  std::int64_t reset();

  struct state; // private to plugins/tools/sandbox

 private:
  friend struct detail::world_access;
  std::shared_ptr<const scenario> spec_;
  std::unique_ptr<state> state_;
  mutable std::mutex mtx_;
};

using world_ptr = std::shared_ptr<world>;

/// Registers the sandbox tools of docs/sandbox-tools.md over `w`: nine read-only tools
/// (`topology.get`, `service.describe`, `host.describe`, `metrics.query`, `logs.search`,
/// `deploys.list`, `flags.list`, `jobs.list`, `alerts.list`) and ten mutating ones. Every call
/// advances the world's clock by `seconds_per_call`.
void add_sandbox_tools(actors::tool_registry& reg, world_ptr w);

/// The world as a source of world state (world_source.cpp): every entity with its metrics now,
/// its dependencies and what actions changed. `time_scale` simulated seconds pass per wall
/// second between observations (0: none).
[[nodiscard]] actors::world_source_ptr make_world_source(world_ptr w, double time_scale);

/// The world behind a source `make_world_source` made; null for any other source.
[[nodiscard]] world_ptr world_of(const actors::world_source_ptr& source);

} // namespace sreh::plugins::sandbox
