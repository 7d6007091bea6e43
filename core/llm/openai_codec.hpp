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
#include "core/llm/stream.hpp"
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
class stream_assembler final : public stream_base {
 public:
  /// One `data:` payload: a chunk, `[DONE]`, or `{"error":…}`. A malformed chunk or an error
  /// fails; the assembler keeps what it had.
  sreh::error feed(std::string_view data);
  /// The payload of a non-standard `error:` SSE field (older llama.cpp).
  sreh::error feed_error(std::string_view payload);

  /// The whole response. Fails when the stream reported an error, or ended before `[DONE]` and
  /// before any finish_reason (a cut connection: errc::unavailable).
  [[nodiscard]] expected<chat_response> finish() const;

 private:
  struct partial_call {
    std::optional<std::int64_t> index;
    std::string id, name, arguments;
  };
  partial_call& slot_for(std::optional<std::int64_t> index, const std::string& id, bool has_name);
  sreh::error on_event(const sse_event& e) override {
    return e.error.empty() ? feed(e.data) : feed_error(e.error);
  }

  std::vector<partial_call> calls_;
  bool finish_seen_ = false;
};

} // namespace sreh::llm::openai
