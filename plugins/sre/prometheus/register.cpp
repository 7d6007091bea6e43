#include "plugins/register.hpp"

#include "plugins/sre/prometheus/prometheus.hpp"

namespace sreh::plugins {

void register_prometheus(actors::toolset_registry& r) {
  r.add({"prometheus",
         [](const config::node_config& cfg, actors::tool_registry& out) -> expected<std::string> {
           if (cfg.prometheus.url.empty())
             return std::string{};
           prometheus::add_prometheus_tools(out, cfg.prometheus);
           return "  tools: prometheus.* on " + cfg.prometheus.url + "\n";
         }});
}

} // namespace sreh::plugins
