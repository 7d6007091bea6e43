#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "actors/tools/tool.hpp"
#include "plugins/tools/sandbox/world.hpp"

namespace sreh::eval {

/// Watches a scenario's `mitigated` expression while a run calls the sandbox tools: after every
/// call it evaluates the expression and keeps the simulated time of the first moment it held.
///
/// Thread-safe: tools run on the tool pool; the world serializes evaluation with the calls.
class mitigation_probe {
 public:
  mitigation_probe(plugins::sandbox::world_ptr w, std::string expr);

  /// Evaluates the expression now (no-op once it has held, or without an expression).
  void check();
  /// Seconds from the scenario start to the first moment the expression held.
  [[nodiscard]] std::optional<std::int64_t> first_held_after_s() const;

 private:
  plugins::sandbox::world_ptr world_;
  std::string expr_;
  std::atomic<std::int64_t> held_at_{-1};
};

/// The tools of `inner` wrapped so that every call is followed by `probe->check()`.
void add_probed_tools(actors::tool_registry& out, const actors::tool_registry& inner,
                      std::shared_ptr<mitigation_probe> probe);

} // namespace sreh::eval
