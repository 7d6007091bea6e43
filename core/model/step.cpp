#include "core/model/step.hpp"

#include <array>

namespace sreh {

namespace {

constexpr std::array<const char*, 9> step_kind_names{
  "reason", "tool", "approval", "timer", "observe", "conclude", "subruns", "message", "reply"};
constexpr std::array<const char*, 5> step_state_names{"intent", "succeeded", "failed", "in_doubt",
                                                      "cancelled"};

} // namespace

const char* to_string(step_kind k) {
  auto i = static_cast<std::size_t>(k);
  return i < step_kind_names.size() ? step_kind_names[i] : "unknown";
}

const char* to_string(step_state s) {
  auto i = static_cast<std::size_t>(s);
  return i < step_state_names.size() ? step_state_names[i] : "unknown";
}

std::optional<step_kind> parse_step_kind(std::string_view s) {
  for (std::size_t i = 0; i < step_kind_names.size(); ++i)
    if (s == step_kind_names[i])
      return static_cast<step_kind>(i);
  return std::nullopt;
}

std::optional<step_state> parse_step_state(std::string_view s) {
  for (std::size_t i = 0; i < step_state_names.size(); ++i)
    if (s == step_state_names[i])
      return static_cast<step_state>(i);
  return std::nullopt;
}

bool retryable(const step& s) {
  return s.state == step_state::failed && s.result.find(final_failure_marker) == std::string::npos;
}

bool is_recall(const step& s) {
  // Only ever the first step: a provider asks this of every step before each decision.
  return s.n == 1 && s.kind == step_kind::tool &&
         s.decision.find(recall_marker) != std::string::npos;
}

} // namespace sreh
