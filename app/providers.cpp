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

namespace sreh::app {

expected<policy::policy_set> load_policy(const config::node_config& cfg) {
  policy::policy_set p;
  auto m = policy::parse_mode(cfg.policy_mode);
  if (!m)
    return sreh::error{errc::invalid_argument, "policy_mode '" + cfg.policy_mode + "' is unknown"};
  p.default_mode = *m;
  p.version = "mode:" + cfg.policy_mode;
  return p;
}

} // namespace sreh::app
