#include "app/serve/plugins.hpp"

#include <algorithm>

#include "actors/gateway/llm_provider.hpp"
#include "actors/gateway/scripted_provider.hpp"
#include "config/notify/section.hpp"
#include "net/client/model_http.hpp"
#include "plugins/register.hpp"

namespace sreh::app {

namespace {

/// `model.provider: openai | anthropic`: the gateway over the `model:` route and its fallback
/// chain, calling through the asynchronous HTTP client (net/client/model_http.hpp); a chain
/// ending in builtin falls back to the builtin reasoner.
expected<actors::model_provider_ptr> make_llm_provider(const config::model_config& m) {
  static const sreh::system_clock clock;
  std::vector<config::model_route> chain{m.main};
  actors::model_provider_ptr fallback;
  for (const auto& name : m.fallback) {
    if (name == "builtin") {
      config::model_route b;
      b.name = b.provider = "builtin";
      chain.push_back(b);
      actors::provider_registry local;
      plugins::register_builtin_reasoner(local);
      config::model_config bm;
      bm.kb = m.kb;
      bm.kb_text = m.kb_text;
      bm.kb_source = m.kb_source;
      auto made = local.make(bm);
      if (!made)
        return made.error();
      fallback = std::move(*made);
      break; // builtin always answers: nothing after it is tried
    }
    auto i = m.routes.find(name);
    if (i == m.routes.end())
      return sreh::error{errc::invalid_argument,
                         "model.fallback: no route '" + name + "' in models"};
    chain.push_back(i->second);
  }
  // Routes of model.by_label outside the chain: tried first for the runs routed to them.
  const auto default_routes = chain.size();
  for (const auto& lr : m.by_label)
    if (std::none_of(chain.begin(), chain.end(), [&](const auto& r) { return r.name == lr.route; }))
      if (auto i = m.routes.find(lr.route); i != m.routes.end())
        chain.push_back(i->second);
  auto gateway = std::make_shared<actors::model_gateway>(std::move(chain), net::make_model_http(),
                                                         clock, default_routes);
  return actors::model_provider_ptr{
    std::make_shared<actors::llm_provider>(gateway, fallback, m, 64 * 1024)};
}

} // namespace

node_registries registries() {
  node_registries r;
  plugins::register_builtin_reasoner(r.providers);
  r.providers.add("scripted", [](const config::model_config& m) {
    return expected<actors::model_provider_ptr>{
      std::make_shared<actors::scripted_provider>(m.script)};
  });
  r.providers.add("openai", make_llm_provider);
  r.providers.add("anthropic", make_llm_provider);
  plugins::register_testkit(r.toolsets);
  plugins::register_sandbox(r.toolsets);
  plugins::register_sandbox_routes(r.routes);
  plugins::register_prometheus(r.toolsets);
  plugins::register_http_probe(r.toolsets);
  plugins::register_shell(r.toolsets);
  plugins::register_alertmanager_tools(r.toolsets);
  plugins::register_alertmanager(r.routes);
  plugins::register_sre_work_kinds(r.kinds);
  plugins::register_sandbox_section(r.sections);
  plugins::register_http_probe_section(r.sections);
  plugins::register_shell_section(r.sections);
  plugins::register_prometheus_section(r.sections);
  plugins::register_alertmanager_section(r.sections);
  config::register_notify_section(r.sections); // the node's own component, read the same way
  return r;
}

expected<node_plugins> make_tools_and_provider(const node_registries& r,
                                               const config::node_config& cfg,
                                               actors::tool_registry& tools) {
  node_plugins out;
  auto banner = r.toolsets.install(cfg, tools);
  if (!banner)
    return banner.error();
  for (const auto& line : *banner)
    out.banner += line;
  auto provider = r.providers.make(cfg.model);
  if (!provider)
    return provider.error();
  out.provider = std::move(*provider);
  return out;
}

} // namespace sreh::app
