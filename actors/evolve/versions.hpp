#pragma once
// The versions a node reasons and acts with (docs/evolve.md): the config's, and every candidate
// that was ever promoted — a knowledge base, a system prompt or a model route, which together
// make the reasoner, and a policy with its rules. A run pins the versions current when it starts
// (in its spec) and uses them to its end, so a promotion or rollback changes only the runs that
// start after it. Thread-safe.

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "actors/gateway/model_provider.hpp"
#include "config/node/node_config.hpp"
#include "core/base/expected.hpp"
#include "core/evolve/candidate.hpp"
#include "core/policy/policy.hpp"

namespace sreh::actors {

using policy_ptr = std::shared_ptr<const policy::policy_set>;

/// The version of each reasoning artefact a run reasons with: evolve::config_version or a
/// candidate's id.
struct reasoner_pins {
  std::string knowledge_base{evolve::config_version};
  std::string prompt{evolve::config_version};
  std::string model_route{evolve::config_version};

  [[nodiscard]] std::string& of(evolve::artefact kind);
  [[nodiscard]] const std::string& of(evolve::artefact kind) const;
  [[nodiscard]] bool all_config() const;
  /// The versions `spec` (a run's) pinned.
  [[nodiscard]] static reasoner_pins pinned_in(std::string_view spec);
};

class version_registry {
 public:
  /// Makes a model provider from a `model:` section (the plugins' provider registry).
  using model_maker = std::function<expected<model_provider_ptr>(const config::model_config&)>;
  /// Reads a policy file's text (no ${VAR}); errors name the line.
  using policy_maker =
    std::function<expected<policy::policy_set>(std::string_view body, std::string_view source)>;

  /// `model`, `provider`: the node's model section and the provider made from it; `policy`: the
  /// node's rules.
  version_registry(config::model_config model, model_provider_ptr provider, model_maker make,
                   policy_ptr policy, policy_maker make_policy);

  /// Whether a candidate of `kind` means something for the runs that start now (a knowledge
  /// base when the current route reasons with the builtin reasoner, a prompt when it calls a
  /// model); else why not (conflict).
  [[nodiscard]] sreh::error takes(evolve::artefact kind) const;
  /// The current version of `kind`: evolve::config_version or a candidate's id.
  [[nodiscard]] std::string current(evolve::artefact kind) const;
  /// The current version of each reasoning kind.
  [[nodiscard]] reasoner_pins current_reasoner() const;
  /// Whether version `version` of `kind` is known here (the config's always is).
  [[nodiscard]] bool has(evolve::artefact kind, std::string_view version) const;
  /// The reasoner of the versions `pins` (made once, then shared); the error names a version
  /// this node does not have, or why the versions do not make a reasoner together.
  [[nodiscard]] expected<model_provider_ptr> provider(const reasoner_pins& pins) const;
  /// The reasoner of the current versions with `c`'s (a reasoning candidate) in place of its
  /// kind's: what the gate evaluates. Not kept.
  [[nodiscard]] expected<model_provider_ptr> provider_with(const evolve::candidate& c) const;
  /// The rules of policy version `version`; null for a version never added.
  [[nodiscard]] policy_ptr policy(std::string_view version) const;
  /// `spec` (a goal run's) with the current version of every kind pinned.
  [[nodiscard]] std::string pin(std::string_view spec) const;
  /// Reads `body` as a version of `kind` (a proposal's check); errors name the line.
  [[nodiscard]] sreh::error check(evolve::artefact kind, std::string_view body,
                                  std::string_view source) const;

  /// Makes candidate `c`'s version available to the runs that pin it (idempotent).
  [[nodiscard]] sreh::error add(const evolve::candidate& c);
  /// From now on, runs start on `version` of `kind` (added before, or the config's).
  void make_current(evolve::artefact kind, std::string version);

 private:
  /// The model section of `pins` with `extra` (a candidate not added) in place of its kind's.
  [[nodiscard]] expected<config::model_config> model_of(const reasoner_pins& pins,
                                                        const evolve::candidate* extra) const;

  mutable std::mutex mu_;
  config::model_config model_;
  model_provider_ptr provider_;
  model_maker make_;
  policy_ptr policy_;
  policy_maker make_policy_;
  /// The bodies of the reasoning versions added, by kind and id.
  std::map<evolve::artefact, std::map<std::string, std::string, std::less<>>> bodies_;
  /// The reasoners made, by "KB PROMPT ROUTE" versions.
  mutable std::map<std::string, model_provider_ptr, std::less<>> made_;
  std::map<std::string, policy_ptr, std::less<>> policies_;
  std::map<evolve::artefact, std::string> current_;
};

} // namespace sreh::actors
