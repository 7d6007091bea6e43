#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <stop_token>

#include "actors/gateway/model_provider.hpp"
#include "actors/runtime/blocking_pool.hpp"
#include "actors/runtime/replay_hooks.hpp"
#include "actors/runtime/supervision.hpp"
#include "actors/runtime/world_view.hpp"
#include "actors/tools/tool.hpp"
#include "config/node/node_config.hpp"
#include "core/base/clock.hpp"
#include "core/base/id.hpp"
#include "core/base/logger.hpp"
#include "core/base/metrics.hpp"
#include "core/policy/action_holds.hpp"
#include "core/policy/policy.hpp"
#include "persistence/store/commit_queue.hpp"
#include "persistence/store/store.hpp"

namespace sreh::actors {

class event_hub;

/// Until when this node may act (start a tool's effect). In a cluster a node's runs are its own
/// only while its lease in the store holds: once it lapses, a survivor may claim them and
/// reconcile their steps, so an effect started afterwards could happen twice. The membership's
/// heartbeats renew it (actors/cluster); on a single node it always holds.
class lease_guard {
 public:
  using steady = std::chrono::steady_clock;
  [[nodiscard]] bool holds() const {
    return steady::now().time_since_epoch().count() < until_.load(std::memory_order_acquire);
  }
  /// A heartbeat sent at `sent` renewed the lease for `ttl` (from when the store received it,
  /// which is later): it surely holds until `sent` + 4/5 of `ttl`, the rest being the margin for
  /// an effect already started and for clock-rate differences.
  void renewed(steady::time_point sent, std::chrono::milliseconds ttl) {
    until_.store((sent + ttl * 4 / 5).time_since_epoch().count(), std::memory_order_release);
  }

 private:
  std::atomic<steady::rep> until_{std::numeric_limits<steady::rep>::max()};
};

/// Counters read by kernel_api::stats(); written by actors with relaxed atomics.
struct kernel_counters {
  std::atomic<std::int64_t> active{0};
  std::atomic<std::int64_t> started{0};
  std::atomic<std::int64_t> finished{0};
  std::atomic<std::int64_t> recovered{0};
  std::atomic<std::int64_t> steps{0};
  std::atomic<std::int64_t> parked{0};
  std::atomic<std::int64_t> pending_approvals{0};
};

/// The node's metrics that actors keep (null: not kept, as in unit tests); the rest is read at
/// scrape time from kernel_counters and the writer's stats (net/node/node_parts.cpp).
struct actor_metrics {
  metrics::family<metrics::histogram>* step_seconds = nullptr; // by tool
  metrics::family<metrics::counter>* runs_finished = nullptr;  // by final state
};

/// What every actor of a node shares. Owned by the node facade; outlives every actor.
/// Thread-safe: all members are thread-safe or read-only after start. Actors never call `store`
/// themselves: its calls block, so they run on `store_pool` (actors/runtime/blocking_call.hpp);
/// a store call on a scheduler thread is caught (core/base/blocking.hpp).
class version_registry;

struct runtime {
  const config::node_config& cfg;
  persistence::store& store;
  persistence::commit_queue& writer;
  const tool_registry& tools;
  model_provider_ptr provider;
  const sreh::clock& clock;
  id_generator& ids;
  blocking_pool& pool;       // blocking tools: execute, reconcile, check (limits.tool_threads)
  blocking_pool& store_pool; // the actors' store reads (limits.store_threads)
  const policy::policy_set& policy;
  std::shared_ptr<spdlog::logger> log;
  kernel_counters counters;
  std::atomic<bool> ready{false};
  /// Set when the node stops: every in-flight tool sees it through its run's stop token, so a
  /// shutdown never waits for a long tool (recovery resumes the step after the restart).
  std::stop_source shutdown;
  /// One "commit failed" line per 10 s for all runs together (the store being away fails every
  /// run's commit at once).
  log_limiter commit_errors{std::chrono::seconds{10}};
  /// Allowed mutating actions not yet finished, counted by rate limits (policy_check.cpp).
  policy::action_holds holds{};
  /// Whether this node may start an effect now (renewed by the cluster's heartbeats).
  lease_guard lease{};
  /// The node's supervision tree, where the kernel's supervisor records the kernel's restarts
  /// (null: not recorded, as in unit tests).
  supervision_table* children = nullptr;
  actor_metrics metrics{};
  /// World state as the world sync last observed it: what flow expressions read
  /// (`world.ENTITY.METRIC`). Set before the first run starts; never null on a node.
  std::shared_ptr<const world_view> world{};
  /// The node's live event fan-out, for ephemeral events that are never journaled (seq 0:
  /// `model.delta`, a streamed model answer as it arrives); null: none are published.
  event_hub* hub = nullptr;
  /// Called once a run's end is committed, with its id and kind, on the run actor's thread (it
  /// must not block): the node writes a goal run's postmortem (actors/postmortem). Empty: none.
  std::function<void(const std::string&, const std::string&)> run_ended{};
  /// The versions runs pin when they start and decide with (actors/evolve/versions.hpp); null:
  /// every run decides with `provider`.
  std::shared_ptr<const version_registry> versions{};
  replay_hooks replay{};
};

using runtime_ptr = std::shared_ptr<runtime>;

} // namespace sreh::actors
