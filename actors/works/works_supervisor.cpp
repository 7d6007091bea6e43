// The Works supervisor: keeps the orchestrator and the world sync running as children of the
// node's tree.
#include <functional>
#include <vector>

#include "actors/runtime/supervisor.hpp"
#include "actors/works/orchestrator.hpp"

namespace sreh::actors {

caf::actor spawn_works_supervisor(caf::actor_system& sys, works_env_ptr env, event_hub& hub,
                                  supervision_table& tree,
                                  std::function<void(orchestrator_actor)> current) {
  std::vector<supervised_child> children;
  auto* h = &hub;
  children.push_back({"orchestrator", [env, h, current](caf::local_actor* parent) -> caf::actor {
                        if (parent == nullptr) {
                          current(orchestrator_actor{});
                          return {};
                        }
                        auto a = spawn_orchestrator(parent, env, *h);
                        current(a);
                        return caf::actor_cast<caf::actor>(a);
                      }});
  if (!env->rt->tools.world_sources().empty())
    children.push_back({"world_sync", [env, h](caf::local_actor* parent) -> caf::actor {
                          if (parent == nullptr)
                            return {};
                          return caf::actor_cast<caf::actor>(spawn_world_sync(parent, env, *h));
                        }});
  auto log = env->log;
  return spawn_one_for_one(sys, tree, "node", std::move(log), std::move(children));
}

} // namespace sreh::actors
