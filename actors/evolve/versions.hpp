#pragma once
// The versions a node reasons with (docs/evolve.md): the config's, and every candidate that was
// ever promoted, each with its model provider. A run pins the versions current when it starts
// (in its spec) and decides with them to its end, so a promotion or rollback changes only the
// runs that start after it. Thread-safe.

#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

#include "actors/gateway/model_provider.hpp"
#include "core/base/expected.hpp"
#include "core/evolve/candidate.hpp"

namespace sreh::actors {

class version_registry {
 public:
  /// Makes the builtin reasoner over a knowledge base's text; errors name the line.
  using kb_maker =
    std::function<expected<model_provider_ptr>(std::string_view body, std::string_view source)>;

  /// `config`: the node's provider (its model section). `make`: null when the node does not
  /// reason with the builtin reasoner, where a knowledge base changes nothing.
  version_registry(model_provider_ptr config, std::string config_name, kb_maker make);

  /// Whether candidates of `kind` mean something on this node; else why not.
  [[nodiscard]] sreh::error takes(evolve::artefact kind) const;
  /// The current version of `kind`: evolve::config_version or a candidate's id.
  [[nodiscard]] std::string current(evolve::artefact kind) const;
  /// The provider of knowledge-base version `version`; null for a version never added.
  [[nodiscard]] model_provider_ptr provider(std::string_view version) const;
  /// `spec` (a goal run's) with the current versions pinned.
  [[nodiscard]] std::string pin(std::string_view spec) const;
  /// Parses `body` as a version of `kind` (a proposal's check); errors name the line.
  [[nodiscard]] expected<model_provider_ptr> make(evolve::artefact kind, std::string_view body,
                                                  std::string_view source) const;

  /// Makes candidate `c`'s version available to the runs that pinned it (idempotent).
  [[nodiscard]] sreh::error add(const evolve::candidate& c);
  /// From now on, runs start on `version` of `kind` (added before, or the config's).
  void make_current(evolve::artefact kind, std::string version);

 private:
  mutable std::mutex mu_;
  model_provider_ptr config_;
  std::string config_name_;
  kb_maker make_;
  std::map<std::string, model_provider_ptr, std::less<>> kb_;
  std::string current_kb_{evolve::config_version};
};

} // namespace sreh::actors
