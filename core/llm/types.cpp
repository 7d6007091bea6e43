#include "core/llm/types.hpp"

#include <utility>

namespace sreh::llm {

const char* to_string(role r) {
  switch (r) {
  case role::user:
    return "user";
  case role::assistant:
    return "assistant";
  case role::tool:
    return "tool";
  }
  return "user";
}

message message::user(std::string text) {
  message m;
  m.role = role::user;
  m.text = std::move(text);
  return m;
}

message message::assistant(std::string text, std::vector<tool_call> calls) {
  message m;
  m.role = role::assistant;
  m.text = std::move(text);
  m.tool_calls = std::move(calls);
  return m;
}

message message::tool(std::string tool_call_id, std::string content, bool is_error) {
  message m;
  m.role = role::tool;
  m.result = {std::move(tool_call_id), std::move(content), is_error};
  return m;
}

const char* to_string(finish_reason f) {
  switch (f) {
  case finish_reason::stop:
    return "stop";
  case finish_reason::tool_calls:
    return "tool_calls";
  case finish_reason::length:
    return "length";
  case finish_reason::refusal:
    return "refusal";
  case finish_reason::other:
    return "other";
  }
  return "other";
}

finish_reason openai_finish(std::string_view raw) {
  if (raw == "stop")
    return finish_reason::stop;
  if (raw == "tool_calls" || raw == "function_call")
    return finish_reason::tool_calls;
  if (raw == "length")
    return finish_reason::length;
  if (raw == "content_filter")
    return finish_reason::refusal;
  return finish_reason::other;
}

finish_reason anthropic_finish(std::string_view raw) {
  if (raw == "end_turn" || raw == "stop_sequence")
    return finish_reason::stop;
  if (raw == "tool_use")
    return finish_reason::tool_calls;
  if (raw == "max_tokens" || raw == "model_context_window_exceeded")
    return finish_reason::length;
  if (raw == "refusal")
    return finish_reason::refusal;
  return finish_reason::other;
}

std::string describe(const api_error& e) {
  std::string s;
  if (e.http_status != 0)
    s = "HTTP " + std::to_string(e.http_status);
  if (!e.type.empty())
    s += (s.empty() ? "" : " ") + e.type;
  if (!e.message.empty())
    s += (s.empty() ? "" : ": ") + e.message;
  if (!e.code.empty())
    s += " (code " + e.code + ")";
  return s.empty() ? std::string{"unknown model error"} : s;
}

} // namespace sreh::llm
