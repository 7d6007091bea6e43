#pragma once
// The provider of a node whose model is a language model behind the gateway (`model.provider:
// openai | anthropic`). It is not deterministic: the run journals a `reason` step per call
// (actors/kernel/run/reason.cpp) and replays recorded responses instead of calling again.

#include <functional>
#include <memory>
#include <string>

#include "actors/gateway/model_gateway.hpp"
#include "actors/gateway/model_provider.hpp"
#include "config/node/node_config.hpp"
#include "core/llm/context.hpp"

namespace sreh::actors {

/// The request of a run's next turn, as assembled from its journal.
struct reason_request {
  llm::chat_request request;
  llm::trim_report report;
  std::string hash; // of the request's wire-neutral content: "fnv1a64:<16 hex digits>"
};

/// The system prompt sent when `model.system_prompt` is not set (its version is journaled).
inline constexpr const char* default_system_prompt_version = "sreh-sre-v3";

class llm_provider final : public model_provider {
 public:
  /// `fallback`: the deterministic provider a chain ending in `builtin` falls back to (null:
  /// none). `m`: the node's model section (system prompt, repairs, context budget).
  llm_provider(model_gateway_ptr gateway, model_provider_ptr fallback,
               const config::model_config& m, std::int64_t max_result_bytes);

  [[nodiscard]] std::string name() const override { return chain_name_; }
  [[nodiscard]] bool deterministic() const override { return false; }
  /// Not used by the run (it calls through reason steps); gives up, naming why.
  [[nodiscard]] decision decide(const run_context& ctx) override;
  [[nodiscard]] llm_provider* as_llm() override { return this; }

  /// The request of the next turn of `ctx`'s run. `notes` are repair notes for the model (what
  /// was wrong with its last answer), appended as a last user message. `cache`: the run's own,
  /// kept between its turns (the request is the same with or without it).
  [[nodiscard]] reason_request prepare(const run_context& ctx, const std::string& notes,
                                       llm::prior_steps_cache* cache = nullptr) const;

  [[nodiscard]] model_gateway& gateway() { return *gateway_; }
  /// The route run `r` goes to first (`model.by_label`: the first rule its labels match), or
  /// "" for the chain's own order.
  [[nodiscard]] std::string route_for(const run& r) const;
  [[nodiscard]] const model_provider_ptr& fallback() const { return fallback_; }
  [[nodiscard]] std::int64_t max_repairs() const { return max_repairs_; }
  [[nodiscard]] const std::string& system_prompt_version() const { return prompt_version_; }

  /// Where the answers of reason steps come from instead of the gateway: replay
  /// (eval/replay.hpp) answers each step `n` of run `run_id` from a recorded journal. Set before
  /// the node starts; unset, every call goes to the gateway. Called on the run's actor.
  using answer_source = std::function<gateway_result(const std::string& run_id, std::int64_t n)>;
  void answer_from(answer_source source) { answers_ = std::move(source); }
  [[nodiscard]] const answer_source& answers() const { return answers_; }

 private:
  model_gateway_ptr gateway_;
  model_provider_ptr fallback_;
  std::string chain_name_;
  std::string system_prompt_;
  std::string prompt_version_;
  std::int64_t max_repairs_;
  llm::context_budget budget_;
  std::int64_t max_tokens_;
  std::vector<config::label_route> by_label_;
  answer_source answers_;
};

/// A tool's name as the wire formats allow it (OpenAI and Anthropic: [a-zA-Z0-9_-]{1,64}):
/// every other character becomes '_' ("sandbox.restart" → "sandbox_restart").
[[nodiscard]] std::string wire_tool_name(std::string_view name);

} // namespace sreh::actors
