#pragma once
// A run's conversation (docs/conversation.md): what people say to a run while it works and after
// it ends, and what the agent answers, in one order per run (`seq`). A person's message is
// committed first and taken into the run later, at its next decision: the run journals a
// `message` step for it and marks the message taken by that step in the same transaction, so a
// message is taken exactly once whatever crashes in between. Pure: the model and its wire shape.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/base/clock.hpp"
#include "core/base/expected.hpp"
#include "core/base/status.hpp"

namespace sreh::conversation {

/// `message`: a person's; `reply`: the agent's answer to a question.
enum class message_kind { message, reply };

[[nodiscard]] const char* to_string(message_kind k);
[[nodiscard]] std::optional<message_kind> parse_message_kind(std::string_view s);

/// The author of every reply.
inline constexpr std::string_view agent_author = "agent";

/// Largest text of one message (a steering sentence or a question is a few lines; a pasted log
/// belongs in a note of memory).
inline constexpr std::size_t max_text_bytes = 8 * 1024;
/// Most messages one run keeps (people's and the agent's together).
inline constexpr std::int64_t max_messages_per_run = 1000;

struct message {
  std::string id; // msg_<ulid>
  std::string run_id;
  std::int64_t seq = 0; // 1, 2, ... per run
  std::string author;   // the person, or agent_author
  message_kind kind = message_kind::message;
  std::string text;
  timestamp_us at = 0;
  std::string idempotency_key; // the client's Idempotency-Key; "" when it sent none
  /// The run's step that took it into account (its `message` or `reply` step); 0 until then.
  std::int64_t taken_step = 0;
};

/// Why `text` cannot be a message: empty (invalid_argument) or over max_text_bytes (too_large),
/// naming the limit; ok otherwise.
[[nodiscard]] sreh::error check_text(std::string_view text);

/// The wire shape: `{"id","run","author","kind","text","at","seq","taken_step"}`
/// (taken_step null until taken).
[[nodiscard]] std::string to_json(const message& m);
/// Reads to_json's shape; an error names the member.
[[nodiscard]] expected<message> message_from_json(std::string_view text);

} // namespace sreh::conversation
