#include "actors/evolve/versions.hpp"

#include <fmt/format.h>

namespace sreh::actors {

version_registry::version_registry(model_provider_ptr config, std::string config_name,
                                   kb_maker make)
  : config_(std::move(config)), config_name_(std::move(config_name)), make_(std::move(make)) {}

sreh::error version_registry::takes(evolve::artefact) const {
  if (!make_)
    return {errc::conflict,
            fmt::format("this node reasons with '{}', not the builtin reasoner: a knowledge base "
                        "changes nothing here",
                        config_name_)};
  return {};
}

std::string version_registry::current(evolve::artefact) const {
  std::lock_guard<std::mutex> lock{mu_};
  return current_kb_;
}

model_provider_ptr version_registry::provider(std::string_view version) const {
  if (version == evolve::config_version)
    return config_;
  std::lock_guard<std::mutex> lock{mu_};
  auto i = kb_.find(version);
  return i == kb_.end() ? nullptr : i->second;
}

std::string version_registry::pin(std::string_view spec) const {
  return evolve::pin_version(spec, evolve::artefact::knowledge_base,
                             current(evolve::artefact::knowledge_base));
}

expected<model_provider_ptr> version_registry::make(evolve::artefact kind, std::string_view body,
                                                    std::string_view source) const {
  if (auto err = takes(kind))
    return err;
  return make_(body, source);
}

sreh::error version_registry::add(const evolve::candidate& c) {
  if (provider(c.id))
    return {};
  auto p = make(c.kind, c.body, c.id);
  if (!p)
    return {p.error().code, fmt::format("candidate {}: {}", c.id, p.error().message)};
  std::lock_guard<std::mutex> lock{mu_};
  kb_.emplace(c.id, std::move(*p));
  return {};
}

void version_registry::make_current(evolve::artefact, std::string version) {
  std::lock_guard<std::mutex> lock{mu_};
  current_kb_ = std::move(version);
}

} // namespace sreh::actors
