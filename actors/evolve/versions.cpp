#include "actors/evolve/versions.hpp"

#include <fmt/format.h>

namespace sreh::actors {

version_registry::version_registry(model_provider_ptr provider, std::string provider_name,
                                   kb_maker make_kb, policy_ptr policy, policy_maker make_policy)
  : provider_(std::move(provider)), provider_name_(std::move(provider_name)),
    make_kb_(std::move(make_kb)), policy_(std::move(policy)), make_policy_(std::move(make_policy)) {
}

sreh::error version_registry::takes(evolve::artefact kind) const {
  if (kind == evolve::artefact::knowledge_base && !make_kb_)
    return {errc::conflict,
            fmt::format("this node reasons with '{}', not the builtin reasoner: a knowledge base "
                        "changes nothing here",
                        provider_name_)};
  if (kind == evolve::artefact::policy && !make_policy_)
    return {errc::conflict, "this node takes no policy candidates"};
  return {};
}

std::string version_registry::current(evolve::artefact kind) const {
  std::lock_guard<std::mutex> lock{mu_};
  auto i = current_.find(kind);
  return i == current_.end() ? std::string{evolve::config_version} : i->second;
}

model_provider_ptr version_registry::provider(std::string_view version) const {
  if (version == evolve::config_version)
    return provider_;
  std::lock_guard<std::mutex> lock{mu_};
  auto i = kb_.find(version);
  return i == kb_.end() ? nullptr : i->second;
}

policy_ptr version_registry::policy(std::string_view version) const {
  if (version == evolve::config_version)
    return policy_;
  std::lock_guard<std::mutex> lock{mu_};
  auto i = policies_.find(version);
  return i == policies_.end() ? nullptr : i->second;
}

std::string version_registry::pin(std::string_view spec) const {
  std::string out{spec};
  for (auto kind : evolve::all_artefacts)
    out = evolve::pin_version(out, kind, current(kind));
  return out;
}

sreh::error version_registry::check(evolve::artefact kind, std::string_view body,
                                    std::string_view source) const {
  if (auto err = takes(kind))
    return err;
  if (kind == evolve::artefact::policy) {
    auto p = make_policy_(body, source);
    return p ? sreh::error{} : p.error();
  }
  auto p = make_kb_(body, source);
  return p ? sreh::error{} : p.error();
}

sreh::error version_registry::add(const evolve::candidate& c) {
  if (auto err = takes(c.kind))
    return {err.code, fmt::format("candidate {}: {}", c.id, err.message)};
  auto failed = [&](const sreh::error& e) {
    return sreh::error{e.code, fmt::format("candidate {}: {}", c.id, e.message)};
  };
  if (c.kind == evolve::artefact::policy) {
    if (policy(c.id))
      return {};
    auto p = make_policy_(c.body, c.id);
    if (!p)
      return failed(p.error());
    std::lock_guard<std::mutex> lock{mu_};
    policies_.emplace(c.id, std::make_shared<const policy::policy_set>(std::move(*p)));
    return {};
  }
  if (provider(c.id))
    return {};
  auto p = make_kb_(c.body, c.id);
  if (!p)
    return failed(p.error());
  std::lock_guard<std::mutex> lock{mu_};
  kb_.emplace(c.id, std::move(*p));
  return {};
}

void version_registry::make_current(evolve::artefact kind, std::string version) {
  std::lock_guard<std::mutex> lock{mu_};
  current_[kind] = std::move(version);
}

} // namespace sreh::actors
