#pragma once

#include <string>

#include "actors/gateway/model_provider.hpp"
#include "actors/tools/tool.hpp"
#include "config/node/node_config.hpp"
#include "core/base/expected.hpp"
#include "core/policy/policy.hpp"
#include "plugins/tools/sandbox/world.hpp"

namespace sreh::app {

/// What the node runs with besides its tools.
struct node_plugins {
  actors::model_provider_ptr provider;
  /// The sandbox world the sandbox tools act on (`sandbox.scenario`); null without one.
  plugins::sandbox::world_ptr world;
};

/// Registers the node's tools (the testkit tools; the sandbox tools over a fresh world of
/// `sandbox.scenario` when set) and builds the model provider named by `cfg.model.provider`
/// (`builtin`: the reasoner with `model.kb` or the embedded knowledge base).
[[nodiscard]] expected<node_plugins> make_tools_and_provider(const config::node_config& cfg,
                                                             actors::tool_registry& tools);

/// The banner's hint for a sandbox node: the scenario, its alert and the goal to submit
/// (`sreh submit "..." --label k=v ... --watch`). "" without a sandbox world.
[[nodiscard]] std::string sandbox_hint(const node_plugins& p);

/// The node's policy: the file named by the config, else a policy with the configured mode
/// (`policy_mode`) and no rules.
[[nodiscard]] expected<policy::policy_set> load_policy(const config::node_config& cfg);

} // namespace sreh::app
