#pragma once

#include <string>
#include <vector>

#include "actors/gateway/provider_registry.hpp"
#include "actors/tools/toolset_registry.hpp"
#include "config/node/node_config.hpp"
#include "config/node/sections.hpp"
#include "core/base/expected.hpp"
#include "core/works/kinds.hpp"
#include "net/http/http_server.hpp"

namespace sreh::app {

/// What this build's plugins offer a node: model providers by name, toolsets the config turns
/// on, route groups the HTTP front adds to its own, the kinds of Work its templates may have
/// and the config sections the plugins read (the config is loaded with these two).
struct node_registries {
  actors::provider_registry providers;
  actors::toolset_registry toolsets;
  std::vector<net::route_group> routes;
  works::kind_registry kinds;
  config::section_registry sections;
};

/// The registries with every plugin of this build registered (the one place that names them).
[[nodiscard]] node_registries registries();

/// What a node runs with besides its store.
struct node_plugins {
  actors::model_provider_ptr provider;
  /// What the toolsets want the start banner to say (the sandbox's scenario and goal, ...).
  std::string banner;
};

/// Installs the toolsets `cfg` asks for into `tools` and builds the provider `cfg.model`
/// names. Errors name the config field.
[[nodiscard]] expected<node_plugins> make_tools_and_provider(const node_registries& r,
                                                             const config::node_config& cfg,
                                                             actors::tool_registry& tools);

} // namespace sreh::app
