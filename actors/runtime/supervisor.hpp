#pragma once
// A one-for-one supervisor of actors (the Works control plane's orchestrator and world sync):
// each child that dies is restarted after its backoff, within its budget (supervision.hpp).

#include <caf/all.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "actors/runtime/supervision.hpp"

namespace sreh::actors {

/// An actor's exception handler for supervised children: a bug's exception ends the actor with
/// its message, which its supervisor records (the tree shows it as the death's reason).
caf::error exit_with_message(caf::scheduled_actor*, std::exception_ptr& x);

/// One supervised child. `spawn` starts an incarnation linked to `parent`; it is called with
/// null when the child died, so that whoever follows the incarnation learns there is none now.
struct supervised_child {
  std::string name;
  std::function<caf::actor(caf::local_actor* parent)> spawn;
  restart_policy policy{};
};

/// Spawns a supervisor that starts `children` in order and restarts each one that dies (a death
/// counts against its own budget; a child given up on stays `failed` in `tree`). Adds the
/// children to `tree` under `parent`. Exiting the supervisor (the node stops) takes the linked
/// children with it.
[[nodiscard]] caf::actor spawn_one_for_one(caf::actor_system& sys, supervision_table& tree,
                                           std::string parent, std::shared_ptr<spdlog::logger> log,
                                           std::vector<supervised_child> children);

} // namespace sreh::actors
