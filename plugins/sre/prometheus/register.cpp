#include "plugins/register.hpp"

#include "plugins/sre/prometheus/prometheus.hpp"

namespace sreh::plugins {

void register_prometheus(actors::toolset_registry& r) {
  r.add({"prometheus",
         [](const config::node_config& cfg, actors::tool_registry& out) -> expected<std::string> {
           const auto& s = cfg.section<prometheus::settings>();
           if (s.url.empty())
             return std::string{};
           prometheus::add_prometheus_tools(out, s);
           return "  tools: prometheus.* on " + s.url + "\n";
         }});
}

} // namespace sreh::plugins
