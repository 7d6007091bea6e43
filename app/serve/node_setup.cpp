#include "app/serve/node_setup.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "actors/works/world_tool.hpp"
#include "config/flows/flow_file.hpp"
#include "config/policy/policy_config.hpp"

namespace sreh::app {

namespace {

/// The tools the flows of `flows: DIR` call, against those this node will offer: its toolsets'
/// (installed into `tools`), world.get when they have world sources, less `tools.disable`
/// (as net::node_parts finishes the registry).
sreh::error check_tools_of_flows(const config::node_config& cfg,
                                 const actors::tool_registry& tools) {
  std::vector<std::string> names;
  const auto& off = cfg.tools.disable;
  for (const auto& t : tools.all())
    if (std::find(off.begin(), off.end(), t->name()) == off.end())
      names.push_back(t->name());
  if (!tools.world_sources().empty())
    names.push_back(actors::make_world_tool(std::make_shared<actors::world_view>())->name());
  return config::check_flow_tools(cfg.flows.loaded, names);
}

/// In a cluster with TLS links, this node's certificate must name it: its peers know it by
/// that id.
sreh::error check_cluster_certificate(const config::node_config& cfg) {
  const auto& topo = cfg.cluster.topo;
  if (!topo || !topo->tls)
    return {};
  auto file = config::cluster_tls::for_node(topo->tls->cert_file, cfg.node_id);
  auto names = net::certificate_names(file);
  if (!names)
    return {names.error().code, "cluster tls: " + names.error().message};
  if (std::find(names->begin(), names->end(), cfg.node_id) == names->end())
    return {errc::invalid_argument,
            fmt::format("cluster tls: '{}' is a certificate for {}, not for node '{}'", file,
                        names->empty() ? "no name" : fmt::format("{}", fmt::join(*names, ", ")),
                        cfg.node_id)};
  return {};
}

} // namespace

std::vector<std::string> unset_model_keys(const config::model_config& m) {
  std::vector<std::string> out;
  if (m.provider != "openai" && m.provider != "anthropic")
    return out;
  if (!m.main.api_key_unset.empty())
    out.push_back(m.main.api_key_unset);
  for (const auto& [name, route] : m.routes)
    if (!route.api_key_unset.empty())
      out.push_back(route.api_key_unset);
  return out;
}

expected<node_setup> prepare_node(const node_registries& r, const config::node_config& cfg,
                                  setup_options o) {
  node_setup out;
  if (auto err = check_cluster_certificate(cfg))
    return err;
  if (!cfg.tls.cert_file.empty()) {
    auto tls =
      net::tls_server_context::load({cfg.tls.cert_file, cfg.tls.key_file, cfg.tls.client_ca_file});
    if (!tls)
      return tls.error(); // names tls.cert_file, key_file or client_ca_file
    out.tls = std::move(*tls);
  }
  if (auto unset = unset_model_keys(cfg.model); o.require_model_keys && !unset.empty())
    return sreh::error{errc::invalid_argument, unset.front()};
  out.tools = std::make_shared<actors::tool_registry>();
  auto plugins = make_tools_and_provider(r, cfg, *out.tools);
  if (!plugins)
    return plugins.error();
  out.plugins = std::move(*plugins);
  if (auto err = check_tools_of_flows(cfg, *out.tools))
    return err;
  auto policy = config::node_policy(cfg);
  if (!policy)
    return sreh::error{policy.error().code, "policy_file: " + policy.error().message};
  out.policy = std::move(*policy);
  return out;
}

} // namespace sreh::app
