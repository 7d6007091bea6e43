#pragma once

#include <functional>
#include <string>
#include <vector>

#include "actors/tools/tool.hpp"
#include "config/node/node_config.hpp"
#include "core/base/expected.hpp"

namespace sreh::actors {

/// A family of tools that a node's config turns on: the testkit (`tools.testkit`), the sandbox
/// world (`sandbox.scenario`), later Prometheus, Alertmanager, shell, ... Plugins add theirs
/// when the composition root registers them, so this layer never includes a plugin.
struct toolset {
  std::string name;
  /// Adds the toolset's tools to `out` when `cfg` asks for them (and nothing otherwise).
  /// Returns what the node's start banner should say about it ("" for nothing), or an error
  /// naming the config field that is wrong.
  std::function<expected<std::string>(const config::node_config& cfg, tool_registry& out)> install;
};

/// The toolsets this build offers, installed in the order they were added.
///
/// Concurrency: filled before the node starts, read-only afterwards.
class toolset_registry {
 public:
  void add(toolset t) { sets_.push_back(std::move(t)); }

  /// Installs every toolset the config asks for into `out`. Returns the banner lines of those
  /// that said something, or the first error (prefixed by nothing: it names its field).
  [[nodiscard]] expected<std::vector<std::string>> install(const config::node_config& cfg,
                                                           tool_registry& out) const;

  [[nodiscard]] const std::vector<toolset>& all() const { return sets_; }

 private:
  std::vector<toolset> sets_;
};

} // namespace sreh::actors
