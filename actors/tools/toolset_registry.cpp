#include "actors/tools/toolset_registry.hpp"

namespace sreh::actors {

expected<std::vector<std::string>> toolset_registry::install(const config::node_config& cfg,
                                                             tool_registry& out) const {
  std::vector<std::string> banner;
  for (const auto& s : sets_) {
    auto said = s.install(cfg, out);
    if (!said)
      return said.error();
    if (!said->empty())
      banner.push_back(std::move(*said));
  }
  return banner;
}

} // namespace sreh::actors
