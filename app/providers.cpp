#include "providers.hpp"

#include "sreh/actors/scripted_provider.hpp"
#include "sreh/plugins/testkit.hpp"

namespace sreh::app {

expected<actors::model_provider_ptr> make_tools_and_provider(const config::node_config& cfg,
                                                             actors::tool_registry& tools) {
  plugins::add_testkit_tools(tools, cfg.tools);
  if (cfg.model.provider == "scripted")
    return actors::model_provider_ptr{std::make_shared<actors::scripted_provider>(cfg.model.script)};
  return sreh::error{errc::invalid_argument,
                     "model.provider '" + cfg.model.provider + "' is not available in this build"};
}

} // namespace sreh::app
