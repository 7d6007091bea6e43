#include "plugins/register.hpp"

#include "plugins/sre/alertmanager/tools.hpp"

namespace sreh::plugins {

void register_alertmanager_tools(actors::toolset_registry& r) {
  r.add({"alertmanager",
         [](const config::node_config& cfg, actors::tool_registry& out) -> expected<std::string> {
           const auto& s = cfg.section<alertmanager::settings>();
           if (s.url.empty())
             return std::string{};
           alertmanager::add_alertmanager_tools(out, s);
           return "  tools: alertmanager.* on " + s.url + "\n";
         }});
}

} // namespace sreh::plugins
