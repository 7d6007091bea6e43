#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/base/clock.hpp"
#include "core/model/observation.hpp"

namespace sreh::actors {
class tool_registry;
}

namespace sreh::plugins::reasoner {

/// A read-only or mutating call the engine wants to make next, with why.
struct planned_call {
  std::string tool;
  std::string args = "{}";
  std::string why;
  double gain = 0;
  bool remedy = false; // performs a remedy action (it mutates)
  /// Not before this time (0: now): a verification waits until an action's effect can show.
  timestamp_us not_before_us = 0;
};

/// The calls the reasoner can make on this node, chosen by the capabilities the tools declare
/// (core/model/observation.hpp), never by name: for each need, the first tool in name order that
/// provides it, with its arguments filled in by role. A need that no tool provides has no call,
/// and the reasoner decides without it.
class toolbox {
 public:
  explicit toolbox(const actors::tool_registry& tools);

  [[nodiscard]] std::optional<planned_call> topology() const;
  [[nodiscard]] std::optional<planned_call> alerts() const;
  [[nodiscard]] std::optional<planned_call> flags() const;
  /// The deploys within `window` ("2h").
  [[nodiscard]] std::optional<planned_call> deploys(const std::string& window) const;
  /// Observes the entity `name` of `kind` ("" counts as a service): a description of it, else
  /// a listing of every entity of its kind.
  [[nodiscard]] std::optional<planned_call> describe(const std::string& name,
                                                     const std::string& kind) const;
  /// Observes every entity of `kind` in one call.
  [[nodiscard]] std::optional<planned_call> listing(const std::string& kind) const;
  /// The log lines of the entity `name` of `kind`.
  [[nodiscard]] std::optional<planned_call> logs(const std::string& name,
                                                 const std::string& kind) const;
  /// Performs the remedy `action` with `args` (a JSON object in the action's argument names,
  /// renamed to the tool's).
  [[nodiscard]] std::optional<planned_call> remedy(const std::string& action,
                                                   const std::string& args) const;

 private:
  using entry = std::pair<std::string, obs::capability>; // tool name, what it provides
  template <class Pred>
  [[nodiscard]] const entry* first(obs::capability_kind k, Pred pred) const;

  std::vector<entry> caps_; // in tool name order
};

} // namespace sreh::plugins::reasoner
