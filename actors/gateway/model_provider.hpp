#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/model/run.hpp"
#include "core/model/step.hpp"

namespace sreh::actors {

class tool_registry;

/// What the model sees when asked for the next step.
struct run_context {
  const run& r;
  const std::vector<step>& steps;  // journaled so far, in order, with outcomes
  const tool_registry& tools;
};

/// The model's answer: call a tool, conclude, or give up.
struct decision {
  enum kind_t { call_tool, conclude, give_up } kind = conclude;
  std::string tool;
  std::string args = "{}";       // JSON
  std::string thought;           // the reasoning shown in the timeline
  std::string conclusion;        // for conclude / give_up
  std::string detail = "{}";     // JSON: hypotheses, evidence (journaled with the step)
  std::int64_t tokens = 0;
};

/// A model provider. `deterministic` providers (builtin, scripted) are pure functions of the
/// context, so their decision is journaled inside the next step's intent; others get a `reason`
/// step of their own so that replay reuses the recorded response.
class model_provider {
 public:
  virtual ~model_provider() = default;
  [[nodiscard]] virtual std::string name() const = 0;
  [[nodiscard]] virtual bool deterministic() const { return true; }
  [[nodiscard]] virtual decision decide(const run_context& ctx) = 0;
};

using model_provider_ptr = std::shared_ptr<model_provider>;

} // namespace sreh::actors
