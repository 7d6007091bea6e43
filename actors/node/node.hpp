#pragma once

#include <memory>

#include "actors/kernel/kernel_api.hpp"
#include "actors/gateway/model_provider.hpp"
#include "actors/tools/tool.hpp"
#include "config/node/node_config.hpp"
#include "core/base/clock.hpp"
#include "core/base/id.hpp"
#include "core/policy/policy.hpp"
#include "persistence/store/commit_queue.hpp"
#include "persistence/store/store.hpp"

namespace sreh::actors {

/// The actor side of a node: the CAF actor system, the supervisor, the kernel and its run
/// actors, the pool for blocking tools. Everything it borrows outlives it; the writer must be
/// started before `start` and stopped after `stop`.
class node {
 public:
  node(const config::node_config& cfg, persistence::store& store, persistence::commit_queue& writer,
       const tool_registry& tools, policy::policy_set policy, model_provider_ptr provider,
       const sreh::clock& clock, id_generator& ids);
  ~node();
  node(const node&) = delete;
  node& operator=(const node&) = delete;

  /// Starts the actor system and the kernel, which recovers unfinished runs.
  [[nodiscard]] sreh::error start();
  /// Stops every actor (runs stay durable in the store) and the tool pool.
  void stop();
  /// Thread-safe facade for the HTTP front and the CLI.
  [[nodiscard]] kernel_api& kernel();

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

} // namespace sreh::actors
