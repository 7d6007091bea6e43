#include "app/serve/plugins.hpp"

#include "actors/gateway/scripted_provider.hpp"
#include "plugins/register.hpp"

namespace sreh::app {

node_registries registries() {
  node_registries r;
  plugins::register_builtin_reasoner(r.providers);
  r.providers.add("scripted", [](const config::model_config& m) {
    return expected<actors::model_provider_ptr>{
      std::make_shared<actors::scripted_provider>(m.script)};
  });
  plugins::register_testkit(r.toolsets);
  plugins::register_sandbox(r.toolsets);
  plugins::register_sandbox_routes(r.routes);
  plugins::register_prometheus(r.toolsets);
  plugins::register_http_probe(r.toolsets);
  plugins::register_shell(r.toolsets);
  plugins::register_alertmanager_tools(r.toolsets);
  plugins::register_alertmanager(r.routes);
  plugins::register_sre_work_kinds(r.kinds);
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
