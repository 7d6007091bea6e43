#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/model/run.hpp"
#include "core/model/step.hpp"

namespace sreh::actors {

class tool_registry;
class llm_provider;

/// What a provider keeps between the decisions of one run (the builtin reasoner: its evidence so
/// far, so that a decision reads only the new steps). Owned by the run actor and dropped with it:
/// a run recovered after a crash, or resumed after it parked, starts without one. A
/// deterministic provider therefore keeps only what it can rebuild from the steps, and decides
/// the same with or without it. Used from the run actor only, one decision at a time.
class run_memory {
 public:
  virtual ~run_memory() = default;
};

using run_memory_ptr = std::unique_ptr<run_memory>;

/// What the model sees when asked for the next step.
struct run_context {
  const run& r;
  const std::vector<step>& steps;   // journaled so far, in order, with outcomes
  const tool_registry& tools;       // what the node offers; tool steps' observations come from it
  run_memory_ptr* memory = nullptr; // the run's memory slot; null: every decision starts afresh
};

/// The model's answer: call a tool, conclude, or give up.
struct decision {
  enum kind_t { call_tool, conclude, give_up } kind = conclude;
  std::string tool;
  std::string args = "{}";   // JSON
  std::string thought;       // the reasoning shown in the timeline
  std::string conclusion;    // for conclude / give_up
  std::string detail = "{}"; // JSON: hypotheses, evidence (journaled with the step)
  std::int64_t tokens = 0;
  std::string idempotency_key; // the tool call's; "" = `<run id>:<n>` (a flow sets its own)
  /// call_tool: not before this time (the node's clock, µs; 0 = now). A later time parks the run
  /// on a durable timer first, then asks the provider again: a verification that must wait for
  /// the metrics to show an action's effect (a Prometheus rate over its window).
  timestamp_us not_before_us = 0;
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
  /// The language-model provider behind the gateway (actors/gateway/llm_provider.hpp), whose
  /// calls the run makes as `reason` steps; null for the deterministic ones.
  [[nodiscard]] virtual llm_provider* as_llm() { return nullptr; }
};

using model_provider_ptr = std::shared_ptr<model_provider>;

} // namespace sreh::actors
