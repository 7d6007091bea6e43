#pragma once
// The neutral model types: what the gateway asks a model and what it answers, whatever the wire
// format (core/llm/openai_codec.hpp, core/llm/anthropic_codec.hpp translate to and from these).
// Pure data, no I/O.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sreh::llm {

/// A tool the model asked for. `arguments` is the JSON text exactly as the model produced it
/// (it may be invalid JSON: bad model output is data, checked by the caller).
struct tool_call {
  std::string id;
  std::string name;
  std::string arguments = "{}";
};

/// The answer to one tool call, sent back on the next turn.
struct tool_result {
  std::string tool_call_id;
  std::string content;
  bool is_error = false;
};

enum class role { user, assistant, tool };

[[nodiscard]] const char* to_string(role r);

/// One turn of the conversation. `user`: `text`. `assistant`: `text` and/or `tool_calls`.
/// `tool`: `result` (the system prompt is not a message: chat_request::system).
struct message {
  llm::role role = role::user;
  std::string text;
  std::vector<tool_call> tool_calls;
  tool_result result;

  [[nodiscard]] static message user(std::string text);
  [[nodiscard]] static message assistant(std::string text, std::vector<tool_call> calls = {});
  [[nodiscard]] static message tool(std::string tool_call_id, std::string content,
                                    bool is_error = false);
};

/// A tool offered to the model: its name, what it does, its arguments as a JSON Schema (text).
struct tool_spec {
  std::string name;
  std::string description;
  std::string parameters = R"({"type":"object"})";
};

/// A request to a chat model.
struct chat_request {
  std::string model;
  std::string system;
  std::vector<message> messages;
  std::vector<tool_spec> tools;
  std::int64_t max_tokens = 1024;
  std::optional<double> temperature;
  bool stream = false;
};

/// Why the model stopped, normalized over the providers. `refusal` covers OpenAI's
/// `content_filter` and message `refusal`, and Anthropic's `refusal`. Anything else (Anthropic's
/// `pause_turn`, a server's own value) is `other`, with the raw value kept in the response.
enum class finish_reason { stop, tool_calls, length, refusal, other };

[[nodiscard]] const char* to_string(finish_reason f);

/// OpenAI `finish_reason` → neutral (`stop`, `tool_calls`, `function_call`, `length`,
/// `content_filter`; anything else is `other`).
[[nodiscard]] finish_reason openai_finish(std::string_view raw);

/// Anthropic `stop_reason` → neutral (`end_turn`, `stop_sequence`, `tool_use`, `max_tokens`,
/// `model_context_window_exceeded`, `refusal`; `pause_turn` and the rest are `other`).
[[nodiscard]] finish_reason anthropic_finish(std::string_view raw);

struct usage {
  std::int64_t input_tokens = 0;
  std::int64_t output_tokens = 0;
};

/// A model's answer.
struct chat_response {
  std::string id;      // the provider's response id ("chatcmpl-…", "msg_…")
  std::string model;   // the model that answered, as the provider names it
  std::string text;    // the text content, concatenated
  std::string refusal; // OpenAI's separate refusal text, when the model refused
  std::vector<tool_call> tool_calls;
  finish_reason finish = finish_reason::other;
  std::string raw_finish;          // the provider's own value ("end_turn", "stop", …)
  std::optional<llm::usage> usage; // absent when the provider did not say
};

/// An error the provider answered with, neutral over the wire formats. `code` is kept as text
/// (OpenAI sends a string, vLLM and llama.cpp an integer); `type` is the provider's error type
/// ("invalid_request_error", "overloaded_error", "exceed_context_size_error", …).
struct api_error {
  int http_status = 0; // 0 when it came inside a stream
  std::string type;
  std::string message;
  std::string code;
};

/// "HTTP 529 overloaded_error: Overloaded (code 529)", for logs and step outcomes.
[[nodiscard]] std::string describe(const api_error& e);

} // namespace sreh::llm
