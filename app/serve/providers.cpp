#include "app/serve/providers.hpp"

#include "config/policy/policy_config.hpp"

#include <fmt/format.h>

#include <cctype>

#include "actors/gateway/scripted_provider.hpp"
#include "plugins/models/builtin/reasoner.hpp"
#include "plugins/tools/sandbox/scenario.hpp"
#include "plugins/tools/testkit/testkit.hpp"

namespace sreh::app {

namespace {

expected<actors::model_provider_ptr> make_provider(const config::model_config& m) {
  if (m.provider == "scripted")
    return actors::model_provider_ptr{std::make_shared<actors::scripted_provider>(m.script)};
  if (m.provider == "builtin") {
    auto p = plugins::make_builtin_reasoner(m.kb);
    if (!p)
      return sreh::error{p.error().code, "model.kb: " + p.error().message};
    return p;
  }
  return sreh::error{errc::invalid_argument,
                     "model.provider '" + m.provider + "' is not available in this build"};
}

/// A shell word: as is when plain, else in single quotes.
std::string shell_word(const std::string& s) {
  bool plain = !s.empty();
  for (char c : s)
    plain = plain && (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' ||
                      c == '.' || c == '/' || c == '=' || c == ':');
  if (plain)
    return s;
  std::string out = "'";
  for (char c : s)
    out += c == '\'' ? std::string{"'\\''"} : std::string(1, c);
  return out + "'";
}

} // namespace

expected<node_plugins> make_tools_and_provider(const config::node_config& cfg,
                                               actors::tool_registry& tools) {
  node_plugins out;
  if (cfg.tools.testkit)
    plugins::add_testkit_tools(tools, cfg.tools);
  if (!cfg.sandbox.scenario.empty()) {
    auto sc = plugins::sandbox::load_scenario(cfg.sandbox.scenario);
    if (!sc)
      return sreh::error{sc.error().code, "sandbox.scenario: " + sc.error().message};
    out.world = std::make_shared<plugins::sandbox::world>(std::move(*sc));
    plugins::sandbox::add_sandbox_tools(tools, out.world);
  }
  auto provider = make_provider(cfg.model);
  if (!provider)
    return provider.error();
  out.provider = std::move(*provider);
  return out;
}

std::string sandbox_hint(const node_plugins& p) {
  if (!p.world)
    return {};
  const auto& sc = p.world->spec();
  std::string labels;
  if (!sc.alert.name.empty())
    labels += " --label " + shell_word("alert=" + sc.alert.name);
  for (auto& [k, v] : sc.alert.labels)
    labels += " --label " + shell_word(k + "=" + v);
  std::string summary;
  if (auto it = sc.alert.annotations.find("summary"); it != sc.alert.annotations.end())
    summary = ": " + it->second;
  return fmt::format("  sandbox: scenario '{}' ({}), alert {}{}\n"
                     "  try:  sreh submit {}{} --watch\n",
                     sc.id, sc.file, sc.alert.name.empty() ? "(none)" : sc.alert.name, summary,
                     shell_word(sc.goal), labels);
}

} // namespace sreh::app

namespace sreh::app {

expected<policy::policy_set> load_policy(const config::node_config& cfg) {
  if (!cfg.policy_file.empty())
    return config::load_policy_file(cfg.policy_file);
  policy::policy_set p;
  auto m = policy::parse_mode(cfg.policy_mode);
  if (!m)
    return sreh::error{errc::invalid_argument, "policy_mode '" + cfg.policy_mode + "' is unknown"};
  p.default_mode = *m;
  p.version = "mode:" + cfg.policy_mode;
  return p;
}

} // namespace sreh::app
