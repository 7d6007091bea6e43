#include "plugins/register.hpp"

#include "plugins/sre/alertmanager/tools.hpp"

namespace sreh::plugins {

void register_alertmanager_tools(actors::toolset_registry& r) {
  r.add({"alertmanager",
         [](const config::node_config& cfg, actors::tool_registry& out) -> expected<std::string> {
           if (cfg.alertmanager.url.empty())
             return std::string{};
           alertmanager::add_alertmanager_tools(out, cfg.alertmanager);
           return "  tools: alertmanager.* on " + cfg.alertmanager.url + "\n";
         }});
}

} // namespace sreh::plugins
