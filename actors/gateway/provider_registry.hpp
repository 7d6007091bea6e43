#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "actors/gateway/model_provider.hpp"
#include "config/node/node_config.hpp"
#include "core/base/expected.hpp"

namespace sreh::actors {

/// The model providers a node can be configured with, by the name `model.provider` gives.
/// Plugins add theirs (the builtin reasoner, later openai and anthropic) when the composition
/// root registers them, so this layer never includes a plugin.
///
/// Concurrency: filled before the node starts, read-only afterwards (thread-safe reads).
class provider_registry {
 public:
  /// Builds a provider from the node's `model` section; errors name the offending field.
  using factory = std::function<expected<model_provider_ptr>(const config::model_config&)>;

  /// Adds `name`; a second provider of the same name replaces the first.
  void add(std::string name, factory make);

  /// The provider `m.provider` names. Unknown names are an `invalid_argument` error listing
  /// the names this build offers.
  [[nodiscard]] expected<model_provider_ptr> make(const config::model_config& m) const;

  /// Every registered name, sorted.
  [[nodiscard]] std::vector<std::string> names() const;

 private:
  std::map<std::string, factory, std::less<>> factories_;
};

} // namespace sreh::actors
