#pragma once
// The Anthropic Messages wire format (POST {base_url}/v1/messages), as the official SDK's types
// define it: top-level `system`, `tools` with `input_schema`, `tool_use` / `tool_result`
// content blocks, every `stop_reason`, the stream events. No I/O.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/expected.hpp"
#include "core/llm/stream.hpp"
#include "core/llm/types.hpp"

namespace sreh::llm::anthropic {

/// The `anthropic-version` header value the codec speaks.
inline constexpr const char* api_version = "2023-06-01";

/// The request body. Tool results become `tool_result` blocks of a user turn (adjacent turns of
/// one role are merged, as the API wants them alternating); assistant tool calls become
/// `tool_use` blocks with `input` parsed from the arguments (arguments that are not a JSON object
/// are sent as `{"arguments_text": "…"}` so that the model sees what it said). Fails
/// (invalid_argument) when a tool's `parameters` is not a JSON object or `max_tokens` < 1.
[[nodiscard]] expected<std::string> build_request(const chat_request& req);

/// A non-streamed response body (Message). A body of `"type":"error"` fails with its
/// description.
[[nodiscard]] expected<chat_response> parse_response(std::string_view body);

/// Reassembles a streamed response from its events: message_start, content_block_start /
/// _delta (text_delta, input_json_delta) / _stop, message_delta (stop_reason, usage),
/// message_stop, ping, error. Unknown event and block types are skipped (the API may add some).
class stream_assembler final : public stream_base {
 public:
  /// One `data:` payload (the event's type is inside it).
  sreh::error feed(std::string_view data);
  /// The whole response; fails when the stream reported an error or ended before message_stop
  /// and before any stop_reason (errc::unavailable).
  [[nodiscard]] expected<chat_response> finish() const;

 private:
  struct block {
    std::int64_t index = 0;
    enum kind_t { text_block, tool_use_block, other_block } kind = other_block;
    std::string text, id, name, json, initial_input;
  };
  block* find(std::int64_t index);
  sreh::error on_event(const sse_event& e) override { return feed(e.data); }

  std::vector<block> blocks_;
  bool stop_seen_ = false;
};

} // namespace sreh::llm::anthropic
