#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/base/clock.hpp"

namespace sreh {

/// `subruns`: a flow step that starts runs of its own (a goal, another flow, parallel branches)
/// and waits for them to end (docs/flows.md). `message`: a person's message taken into the run
/// at this point (its args the message, its result how the run read it: docs/conversation.md);
/// `reply`: the agent's answer to a question.
enum class step_kind { reason, tool, approval, timer, observe, conclude, subruns, message, reply };

/// `intent` is committed before the side effect; the others are outcomes committed after it.
enum class step_state { intent, succeeded, failed, in_doubt, cancelled };

[[nodiscard]] const char* to_string(step_kind k);
[[nodiscard]] const char* to_string(step_state s);
[[nodiscard]] std::optional<step_kind> parse_step_kind(std::string_view s);
[[nodiscard]] std::optional<step_state> parse_step_state(std::string_view s);

/// One journaled step of a run. Written twice: the intent (state = intent, no outcome fields)
/// and then the outcome (state, result or error, finished_at).
struct step {
  std::string run_id;
  std::int64_t n = 0; // run-local, 1-based
  step_kind kind = step_kind::tool;
  step_state state = step_state::intent;
  std::string tool;            // tool name for `tool` steps
  std::string args = "{}";     // JSON
  std::string idempotency_key; // `<run id>:<n>` for tool steps
  std::string decision = "{}"; // JSON: why this step was chosen (thought, hypotheses)
  std::string result;          // JSON, empty until the outcome
  std::string error;           // message when failed / in doubt
  bool result_truncated = false;
  timestamp_us started_at = 0;
  timestamp_us finished_at = 0; // 0 until the outcome
  /// When the tool began to execute (after any approval wait); 0 when it never did. The wait is
  /// `executed_at - started_at`, the execution `finished_at - executed_at`.
  timestamp_us executed_at = 0;
  std::int64_t attempts = 1; // >1 when re-run after recovery
};

/// The member a failed step's result carries when no retry can change its outcome:
/// `{"retryable": false, ...}` — a denial by a human or the policy, an expired approval, a tool
/// that refused the call as asked (a conflict with the state, an invalid or unknown target).
inline constexpr std::string_view final_failure_marker = R"("retryable":false)";

/// Whether repeating a failed step could succeed: false when its result says it is final.
[[nodiscard]] bool retryable(const step& s);

/// The member of a decision that makes its tool step a run's recall: the search of long-term
/// memory the kernel made before the run's first step (docs/memory.md), not a call the
/// reasoner chose.
inline constexpr std::string_view recall_marker = R"("recall":true)";

/// Whether `s` is a run's recall: its first step, a tool step whose decision carries
/// `recall_marker`.
[[nodiscard]] bool is_recall(const step& s);

} // namespace sreh
