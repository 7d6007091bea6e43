#pragma once
// The versions a node reasons and acts with (docs/evolve.md): the config's, and every candidate
// that was ever promoted — a knowledge base with its model provider, a policy with its rules. A
// run pins the versions current when it starts (in its spec) and uses them to its end, so a
// promotion or rollback changes only the runs that start after it. Thread-safe.

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "actors/gateway/model_provider.hpp"
#include "core/base/expected.hpp"
#include "core/evolve/candidate.hpp"
#include "core/policy/policy.hpp"

namespace sreh::actors {

using policy_ptr = std::shared_ptr<const policy::policy_set>;

class version_registry {
 public:
  /// Makes the builtin reasoner over a knowledge base's text; errors name the line.
  using kb_maker =
    std::function<expected<model_provider_ptr>(std::string_view body, std::string_view source)>;
  /// Reads a policy file's text (no ${VAR}); errors name the line.
  using policy_maker =
    std::function<expected<policy::policy_set>(std::string_view body, std::string_view source)>;

  /// `provider`, `policy`: the node's config versions. `make_kb`: null when the node does not
  /// reason with the builtin reasoner, where a knowledge base changes nothing.
  version_registry(model_provider_ptr provider, std::string provider_name, kb_maker make_kb,
                   policy_ptr policy, policy_maker make_policy);

  /// Whether candidates of `kind` mean something on this node; else why not (conflict).
  [[nodiscard]] sreh::error takes(evolve::artefact kind) const;
  /// The current version of `kind`: evolve::config_version or a candidate's id.
  [[nodiscard]] std::string current(evolve::artefact kind) const;
  /// The provider of knowledge-base version `version`; null for a version never added.
  [[nodiscard]] model_provider_ptr provider(std::string_view version) const;
  /// The rules of policy version `version`; null for a version never added.
  [[nodiscard]] policy_ptr policy(std::string_view version) const;
  /// `spec` (a goal run's) with the current version of every kind pinned.
  [[nodiscard]] std::string pin(std::string_view spec) const;
  /// Reads `body` as a version of `kind` (a proposal's check); errors name the line.
  [[nodiscard]] sreh::error check(evolve::artefact kind, std::string_view body,
                                  std::string_view source) const;

  /// Makes candidate `c`'s version available to the runs that pinned it (idempotent).
  [[nodiscard]] sreh::error add(const evolve::candidate& c);
  /// From now on, runs start on `version` of `kind` (added before, or the config's).
  void make_current(evolve::artefact kind, std::string version);

 private:
  mutable std::mutex mu_;
  model_provider_ptr provider_;
  std::string provider_name_;
  kb_maker make_kb_;
  policy_ptr policy_;
  policy_maker make_policy_;
  std::map<std::string, model_provider_ptr, std::less<>> kb_;
  std::map<std::string, policy_ptr, std::less<>> policies_;
  std::map<evolve::artefact, std::string> current_;
};

} // namespace sreh::actors
