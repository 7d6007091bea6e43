#include "plugins/register.hpp"

#include "plugins/tools/testkit/testkit.hpp"

namespace sreh::plugins {

void register_testkit(actors::toolset_registry& r) {
  r.add({"testkit",
         [](const config::node_config& cfg, actors::tool_registry& out) -> expected<std::string> {
           if (!cfg.tools.testkit)
             return std::string{};
           add_testkit_tools(out, cfg.tools);
           return std::string{"  tools: the testkit (test.*) is on (tools.testkit)\n"};
         }});
}

} // namespace sreh::plugins
