#include "actors/evolve/versions.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace sreh::actors {

namespace {

bool calls_a_model(const config::model_config& m) {
  return m.provider == "openai" || m.provider == "anthropic";
}

bool reasons_builtin(const config::model_config& m) {
  return m.provider == "builtin" ||
         std::find(m.fallback.begin(), m.fallback.end(), "builtin") != m.fallback.end();
}

std::string route_name(const config::model_config& m) {
  return calls_a_model(m) ? fmt::format("{} {}", m.provider, m.main.model) : m.provider;
}

} // namespace

std::string& reasoner_pins::of(evolve::artefact kind) {
  return kind == evolve::artefact::prompt        ? prompt
         : kind == evolve::artefact::model_route ? model_route
                                                 : knowledge_base;
}

const std::string& reasoner_pins::of(evolve::artefact kind) const {
  return const_cast<reasoner_pins*>(this)->of(kind);
}

bool reasoner_pins::all_config() const {
  return knowledge_base == evolve::config_version && prompt == evolve::config_version &&
         model_route == evolve::config_version;
}

reasoner_pins reasoner_pins::pinned_in(std::string_view spec) {
  reasoner_pins p;
  for (auto kind : evolve::all_artefacts)
    if (evolve::reasoning(kind))
      p.of(kind) = evolve::pinned_version(spec, kind);
  return p;
}

version_registry::version_registry(config::model_config model, model_provider_ptr provider,
                                   model_maker make, policy_ptr policy, policy_maker make_policy)
  : model_(std::move(model)), provider_(std::move(provider)), make_(std::move(make)),
    policy_(std::move(policy)), make_policy_(std::move(make_policy)) {}

sreh::error version_registry::takes(evolve::artefact kind) const {
  if (kind == evolve::artefact::policy)
    return make_policy_ ? sreh::error{}
                        : sreh::error{errc::conflict, "this node takes no policy candidates"};
  if (kind == evolve::artefact::model_route)
    return {};
  auto m = model_of(current_reasoner(), nullptr);
  if (!m)
    return m.error();
  if (kind == evolve::artefact::knowledge_base && !reasons_builtin(*m))
    return {errc::conflict,
            fmt::format("this node reasons with '{}', not the builtin reasoner: a knowledge base "
                        "changes nothing here",
                        route_name(*m))};
  if (kind == evolve::artefact::prompt && !calls_a_model(*m))
    return {errc::conflict,
            fmt::format("this node reasons with '{}', which is sent no prompt: a prompt changes "
                        "nothing here (propose a model route first)",
                        route_name(*m))};
  return {};
}

std::string version_registry::current(evolve::artefact kind) const {
  std::lock_guard<std::mutex> lock{mu_};
  auto i = current_.find(kind);
  return i == current_.end() ? std::string{evolve::config_version} : i->second;
}

reasoner_pins version_registry::current_reasoner() const {
  reasoner_pins p;
  for (auto kind : evolve::all_artefacts)
    if (evolve::reasoning(kind))
      p.of(kind) = current(kind);
  return p;
}

bool version_registry::has(evolve::artefact kind, std::string_view version) const {
  if (version == evolve::config_version)
    return true;
  std::lock_guard<std::mutex> lock{mu_};
  if (kind == evolve::artefact::policy)
    return policies_.find(version) != policies_.end();
  auto i = bodies_.find(kind);
  return i != bodies_.end() && i->second.find(version) != i->second.end();
}

expected<config::model_config> version_registry::model_of(const reasoner_pins& pins,
                                                          const evolve::candidate* extra) const {
  std::map<evolve::artefact, std::pair<std::string, std::string>> texts; // kind → (id, body)
  {
    std::lock_guard<std::mutex> lock{mu_};
    for (auto kind : evolve::all_artefacts) {
      if (!evolve::reasoning(kind))
        continue;
      if (extra != nullptr && extra->kind == kind) {
        texts[kind] = {extra->id, extra->body};
        continue;
      }
      const auto& version = pins.of(kind);
      if (version == evolve::config_version)
        continue;
      const std::string* body = nullptr;
      if (auto k = bodies_.find(kind); k != bodies_.end())
        if (auto i = k->second.find(version); i != k->second.end())
          body = &i->second;
      if (body == nullptr)
        return sreh::error{errc::not_found,
                           fmt::format("no {} version {} on this node", to_string(kind), version)};
      texts[kind] = {version, *body};
    }
  }
  auto m = model_;
  if (auto r = texts.find(evolve::artefact::model_route); r != texts.end()) {
    auto read = config::load_model_candidate(r->second.second, r->second.first, model_);
    if (!read)
      return read.error();
    m = std::move(*read);
  }
  if (auto k = texts.find(evolve::artefact::knowledge_base); k != texts.end()) {
    m.kb_source = k->second.first;
    m.kb_text = k->second.second;
  }
  if (auto p = texts.find(evolve::artefact::prompt); p != texts.end()) {
    m.system_prompt_version = p->second.first;
    m.system_prompt = p->second.second;
  }
  return m;
}

expected<model_provider_ptr> version_registry::provider(const reasoner_pins& pins) const {
  if (pins.all_config())
    return provider_;
  auto key = fmt::format("{} {} {}", pins.knowledge_base, pins.prompt, pins.model_route);
  {
    std::lock_guard<std::mutex> lock{mu_};
    if (auto i = made_.find(key); i != made_.end())
      return i->second;
  }
  auto m = model_of(pins, nullptr);
  if (!m)
    return m.error();
  auto made = make_(*m);
  if (!made)
    return made.error();
  std::lock_guard<std::mutex> lock{mu_};
  return made_.emplace(std::move(key), std::move(*made)).first->second; // the first one made
}

expected<model_provider_ptr> version_registry::provider_with(const evolve::candidate& c) const {
  auto m = model_of(current_reasoner(), &c);
  if (!m)
    return m.error();
  return make_(*m);
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
  if (kind == evolve::artefact::prompt &&
      body.find_first_not_of(" \t\r\n") == std::string_view::npos)
    return {errc::invalid_argument, fmt::format("{}: a prompt of blanks only", source)};
  evolve::candidate c;
  c.id = std::string{source};
  c.kind = kind;
  c.body = std::string{body};
  auto p = provider_with(c);
  return p ? sreh::error{} : p.error();
}

sreh::error version_registry::add(const evolve::candidate& c) {
  if (has(c.kind, c.id))
    return {};
  if (c.kind == evolve::artefact::policy) {
    if (!make_policy_)
      return {errc::conflict, fmt::format("candidate {}: this node takes no policies", c.id)};
    auto p = make_policy_(c.body, c.id);
    if (!p)
      return {p.error().code, fmt::format("candidate {}: {}", c.id, p.error().message)};
    std::lock_guard<std::mutex> lock{mu_};
    policies_.emplace(c.id, std::make_shared<const policy::policy_set>(std::move(*p)));
    return {};
  }
  if (c.kind == evolve::artefact::model_route)
    if (auto read = config::load_model_candidate(c.body, c.id, model_); !read)
      return {read.error().code, fmt::format("candidate {}: {}", c.id, read.error().message)};
  std::lock_guard<std::mutex> lock{mu_};
  bodies_[c.kind].emplace(c.id, c.body);
  return {};
}

void version_registry::make_current(evolve::artefact kind, std::string version) {
  std::lock_guard<std::mutex> lock{mu_};
  current_[kind] = std::move(version);
}

} // namespace sreh::actors
