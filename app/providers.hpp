#pragma once

#include "sreh/actors/model_provider.hpp"
#include "sreh/actors/tool.hpp"
#include "sreh/config/node_config.hpp"
#include "sreh/core/expected.hpp"
#include "sreh/core/policy.hpp"

namespace sreh::app {

/// Registers the node's tools and builds the model provider named by `cfg.model.provider`.
[[nodiscard]] expected<actors::model_provider_ptr> make_tools_and_provider(
  const config::node_config& cfg, actors::tool_registry& tools);

/// The node's policy: the file named by the config, else a policy with the configured mode
/// (`policy_mode`) and no rules.
[[nodiscard]] expected<policy::policy_set> load_policy(const config::node_config& cfg);

} // namespace sreh::app
