#pragma once
// Small helpers the codecs share (field access is core/base/json.hpp's), and the error-body
// parser. Internal to core/llm.

#include <rapidjson/document.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/base/json.hpp"
#include "core/llm/types.hpp"

namespace sreh::llm::wire {

/// Arguments as the model sent them: a string is taken as the JSON text it holds (an empty one
/// is "{}"); an object (some servers send one) is serialized.
[[nodiscard]] std::string arguments_of(const rapidjson::Value* v);

} // namespace sreh::llm::wire

namespace sreh::llm {

/// Parses an error body of either wire format into a neutral error; never fails. Shapes:
/// OpenAI `{"error":{"message","type","param","code"}}` (code string, integer or null),
/// vLLM < 0.10.1 flat `{"object":"error","message","type","code":400}`, llama.cpp
/// `{"error":{"code":400,"message","type":"exceed_context_size_error"}}`, Ollama
/// `{"error":"text"}`, Anthropic `{"type":"error","error":{"type":"overloaded_error",
/// "message"},"request_id"}`. A body that is not JSON becomes the message (cut to 300 bytes).
[[nodiscard]] api_error parse_error_body(int http_status, std::string_view body);

/// The same from an already parsed value (a stream's error event or chunk).
[[nodiscard]] api_error error_from_json(int http_status, const rapidjson::Value& v);

} // namespace sreh::llm
