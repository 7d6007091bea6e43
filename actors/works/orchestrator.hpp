#pragma once
// The Works control plane's actors (DESIGN.md, "Works control plane"): the orchestrator, one
// actor per active Work (work_actor.cpp) and the world sync (world_sync.cpp).

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "actors/hub/event_hub.hpp"
#include "actors/runtime/runtime.hpp"
#include "actors/runtime/supervision.hpp"
#include "actors/runtime/world_view.hpp"
#include "actors/works/messages.hpp"
#include "core/works/lifecycle.hpp"
#include "core/works/template.hpp"

namespace sreh::actors {

/// How the orchestrator reaches the other members of a cluster (set by actors/node on a
/// clustered node): whether a member's lease holds, its peer actor (null when not linked), and
/// the claim of dead members' open Works (blocking: the store).
struct work_routing {
  std::function<bool(const std::string& node)> alive;
  std::function<caf::actor(const std::string& node)> peer;
  std::function<expected<std::vector<std::string>>()> claim;
};

/// What the Works actors share. Lives as long as the longest of them.
struct works_env {
  runtime_ptr rt;
  kernel_actor kernel;
  std::shared_ptr<world_view> world = std::make_shared<world_view>();
  /// The node's templates by name (config works.loaded), for new Works.
  std::map<std::string, works::work_template, std::less<>> templates;
  std::shared_ptr<spdlog::logger> log;
  std::int64_t check_every_us = 5'000'000;
  std::int64_t passivate_after_us = 30'000'000;
  /// A Work closed (resolved or cancelled) and that is durable: its postmortem is written
  /// (actors/node). Called on the Work's actor: it must not block.
  std::function<void(const std::string&)> work_closed{};
  /// A cluster's members: commands on Works another member owns are forwarded to it
  /// (forward.hpp). None on a single node.
  std::optional<work_routing> routing{};
};
using works_env_ptr = std::shared_ptr<works_env>;

/// Adds `fx`'s timeline entries to `b` as events of Work `w` (their run_seq from `w.seq`, which
/// advances) and sets `w.next_check` for the Work as it is now.
void add_timeline(const works_env& env, works::work& w, const works::work_template& t,
                  const works::effects& fx, persistence::write_batch& b);

/// The orchestrator: recovers the node's open Works at start (their timers, their active runs),
/// makes new Works (durably, before answering), routes commands, run ends (from `hub`) and
/// timers to the actor of each Work, spawning it from the store when it was passivated, and
/// passivates the actors idle for `passivate_after`.
orchestrator_actor spawn_orchestrator(caf::actor_system& sys, works_env_ptr env, event_hub& hub);
/// The same, linked to `parent` (its supervisor).
orchestrator_actor spawn_orchestrator(caf::local_actor* parent, works_env_ptr env, event_hub& hub);

/// Keeps the orchestrator (and, when the node has world sources, the world sync) running as
/// children "orchestrator" and "world_sync" of the node's tree: spawns them linked, and when
/// one dies (a bug) records that in `tree` and spawns it again after the backoff of
/// restart_policy's defaults — a new orchestrator recovers the open Works from the store; when
/// that budget is spent it gives up on that child (the node is then not ready). `current` learns
/// each orchestrator incarnation (null while there is none). An exit sent to the supervisor stops
/// them all.
caf::actor spawn_works_supervisor(caf::actor_system& sys, works_env_ptr env, event_hub& hub,
                                  supervision_table& tree,
                                  std::function<void(orchestrator_actor)> current);

/// The actor of Work `w` made from template `t` (the version it is pinned to).
work_actor spawn_work(caf::local_actor* parent, orchestrator_impl_actor orch, works_env_ptr env,
                      works::work w, works::work_template t);

/// The world sync: observes the node's world sources every `works.world_sync_ms` and after each
/// mutating action, records what changed in world state (new versions with their source) and
/// publishes the current graph to `env->world`. Linked to `parent`.
world_sync_actor spawn_world_sync(caf::local_actor* parent, works_env_ptr env, event_hub& hub);

} // namespace sreh::actors
