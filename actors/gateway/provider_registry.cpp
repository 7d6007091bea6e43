#include "actors/gateway/provider_registry.hpp"

namespace sreh::actors {

void provider_registry::add(std::string name, factory make) {
  factories_[std::move(name)] = std::move(make);
}

expected<model_provider_ptr> provider_registry::make(const config::model_config& m) const {
  auto i = factories_.find(m.provider);
  if (i == factories_.end()) {
    std::string known;
    for (const auto& n : names())
      known += (known.empty() ? "" : ", ") + n;
    return sreh::error{errc::invalid_argument,
                       "model.provider '" + m.provider +
                         "' is not available in this build (known: " + known + ")"};
  }
  return i->second(m);
}

std::vector<std::string> provider_registry::names() const {
  std::vector<std::string> out;
  for (const auto& [name, f] : factories_)
    out.push_back(name);
  return out;
}

} // namespace sreh::actors
