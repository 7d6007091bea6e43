#pragma once
// The OpenAI chat-completions wire format (POST {base_url}/chat/completions), as the official
// OpenAPI spec defines it (CreateChatCompletionRequest / Response / StreamResponse), tolerant of
// the known differences of vLLM, Ollama and llama.cpp server (see docs/models.md). No I/O.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/expected.hpp"
#include "core/base/sse.hpp"
#include "core/llm/types.hpp"

namespace sreh::llm::openai {

struct options {
  /// Send the output limit as `max_completion_tokens` (OpenAI's current name, required by its
  /// reasoning models) instead of `max_tokens` (the deprecated name every compatible server
  /// takes).
  bool max_completion_tokens = false;
};

/// The request body. Fails (invalid_argument) when a tool's `parameters` is not a JSON object.
[[nodiscard]] expected<std::string> build_request(const chat_request& req, const options& opt = {});

/// A non-streamed response body (CreateChatCompletionResponse). The first choice is the answer.
/// A body with an `error` and no `choices` fails with the error's description.
[[nodiscard]] expected<chat_response> parse_response(std::string_view body);

/// Reassembles a streamed response (CreateChatCompletionStreamResponse chunks) from its SSE
/// `data:` payloads, one at a time, or from raw bytes. Tool calls may come whole or in
/// fragments, keyed by `index`; `id`, `index` and `type` may be missing (Ollama, vLLM); usage
/// may come in the last chunk (with empty `choices`), with every chunk, or never.
class stream_assembler {
 public:
  /// One `data:` payload: a chunk, `[DONE]`, or `{"error":…}`. A malformed chunk or an error
  /// fails; the assembler keeps what it had.
  sreh::error feed(std::string_view data);
  /// The payload of a non-standard `error:` SSE field (older llama.cpp).
  sreh::error feed_error(std::string_view payload);
  /// Raw response bytes, split anywhere (an SSE decoder inside).
  sreh::error feed_bytes(std::string_view bytes);

  /// The text that arrived since the last call (for `model.delta` events).
  [[nodiscard]] std::string take_text();
  /// `[DONE]` seen.
  [[nodiscard]] bool done() const { return done_; }
  /// The error the stream reported, if it did.
  [[nodiscard]] const std::optional<api_error>& stream_error() const { return error_; }

  /// The whole response. Fails when the stream reported an error, or ended before `[DONE]` and
  /// before any finish_reason (a cut connection: errc::unavailable).
  [[nodiscard]] expected<chat_response> finish() const;

 private:
  struct partial_call {
    std::optional<std::int64_t> index;
    std::string id, name, arguments;
  };
  partial_call& slot_for(std::optional<std::int64_t> index, const std::string& id, bool has_name);
  sreh::error fail(api_error e);

  chat_response resp_;
  std::vector<partial_call> calls_;
  std::string fresh_text_;
  std::optional<api_error> error_;
  bool done_ = false;
  bool finish_seen_ = false;
  sse_parser sse_;
};

} // namespace sreh::llm::openai
