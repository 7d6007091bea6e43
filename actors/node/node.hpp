#pragma once

#include <functional>
#include <memory>
#include <string>

#include "actors/gateway/model_provider.hpp"
#include "actors/hub/event_hub.hpp"
#include "actors/kernel/kernel_api.hpp"
#include "actors/memory/memory_service.hpp"
#include "actors/postmortem/postmortem_service.hpp"
#include "actors/runtime/replay_hooks.hpp"
#include "actors/runtime/supervision.hpp"
#include "actors/runtime/world_view.hpp"
#include "actors/tools/tool.hpp"
#include "actors/works/works_api.hpp"
#include "config/node/node_config.hpp"
#include "core/base/clock.hpp"
#include "core/base/id.hpp"
#include "core/base/metrics.hpp"
#include "core/policy/policy.hpp"
#include "persistence/store/commit_queue.hpp"
#include "persistence/store/store.hpp"

namespace sreh::actors {

class version_registry;

/// The actor side of a node: the CAF actor system, the supervisors, the kernel and its run
/// actors, the services it supervises (the HTTP front, the relay), the pool for blocking tools.
/// Everything it borrows outlives it; the writer must be started before `start` and stopped
/// after `stop`.
class node {
 public:
  node(const config::node_config& cfg, persistence::store& store, persistence::commit_queue& writer,
       const tool_registry& tools, policy::policy_set policy, model_provider_ptr provider,
       const sreh::clock& clock, id_generator& ids);
  ~node();
  node(const node&) = delete;
  node& operator=(const node&) = delete;

  /// Keeps the actors' metrics (steps by tool and duration, runs by final state) in `r`, which
  /// outlives the node. Before `start`.
  void use_metrics(metrics::registry& r);
  /// Runs the Works control plane (the orchestrator, the world sync) on the events of `hub`,
  /// which outlives the node, keeping the observed world graph in `world` (null: one of its
  /// own). Before `start`; without it the node has no Works.
  void use_hub(event_hub& hub, std::shared_ptr<world_view> world = nullptr);
  /// The versions goal runs pin and decide with (actors/evolve/versions.hpp); before start.
  void use_versions(std::shared_ptr<const version_registry> versions);
  /// A replay's scratch node: what it answers from the recording (eval/replay.hpp); before start.
  void use_replay(replay_hooks hooks);
  /// Called once, on an actor thread, when the kernel's supervisor gave up (the kernel died more
  /// often than its restart budget allows): the node can run no goals any more and its owner
  /// should stop it loudly rather than serve a dead kernel. Must only signal (not block, not
  /// stop the node itself). Before `start`; without it the node stays up, not ready.
  void on_fatal(std::function<void(std::string why)> f);

  /// Starts the actor system and the kernel, which recovers unfinished runs.
  [[nodiscard]] sreh::error start();
  /// Stops the services (the newest first), then every actor (runs stay durable in the store)
  /// and the tool pool.
  void stop();
  /// Supervises `svc` from now on: starts it (its error when that fails: it is then not
  /// supervised), restarts it with backoff when it reports a failure, within `policy`'s budget,
  /// and stops it when the node stops. A service that exhausts its budget is left `failed`: the
  /// node is then not ready (readyz names it) but keeps running its runs. After `start`;
  /// blocks until the service has started.
  [[nodiscard]] sreh::error supervise(service_ptr svc, restart_policy policy = {});
  /// The children of the node's supervisors (the kernel, the services). Thread-safe.
  [[nodiscard]] const supervision_table& tree() const;
  /// Thread-safe facade for the HTTP front and the CLI.
  [[nodiscard]] kernel_api& kernel();
  /// The Works control plane's facade; null when the node runs without a hub (use_hub).
  [[nodiscard]] works_api* works();
  /// Long-term memory: search and changes (blocking: not from a scheduler thread).
  [[nodiscard]] memory_service& memory();
  /// Postmortems of finished runs (blocking: not from a scheduler thread).
  [[nodiscard]] postmortem_service& postmortems();

  struct impl; // node.cpp: the parts, in the order they start

 private:
  std::unique_ptr<impl> impl_;
};

} // namespace sreh::actors
