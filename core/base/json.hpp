#pragma once

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "core/base/clock.hpp"
#include "core/base/expected.hpp"

namespace sreh::json {

/// The one JSON writer: RapidJSON's, plus `raw_value`, which appends a serialized value in one
/// copy (RapidJSON's RawValue copies it byte by byte: most of what writing a step's JSON cost).
class writer : public rapidjson::Writer<rapidjson::StringBuffer> {
 public:
  using rapidjson::Writer<rapidjson::StringBuffer>::Writer;
  /// `text`, a JSON value of `type` already serialized, as the next value.
  bool raw_value(std::string_view text, rapidjson::Type type) {
    Prefix(type);
    std::memcpy(os_->Push(text.size()), text.data(), text.size());
    return EndValue(true);
  }
};

/// Parses `text` as one JSON value. Rejects nesting deeper than `max_depth`, invalid UTF-8 and
/// trailing content; the error names the byte offset and what RapidJSON found.
[[nodiscard]] expected<rapidjson::Document> parse(std::string_view text, int max_depth = 64);

/// Same, and requires an object at the top.
[[nodiscard]] expected<rapidjson::Document> parse_object(std::string_view text, int max_depth = 64);

/// The JSON type of a value as users read it: "null", "boolean", "number", "string", "array",
/// "object" (for messages like "expected a string, got number").
[[nodiscard]] const char* type_of(const rapidjson::Value& v);

/// Serializes a value as compact JSON text.
[[nodiscard]] std::string stringify(const rapidjson::Value& v);

// -- tolerant member access on parsed JSON (the one set: codecs, the CLI and plugins use it) --

/// The member `key` of `v` when `v` is an object and has it (any type), else null.
[[nodiscard]] const rapidjson::Value* member(const rapidjson::Value& v, const char* key);

/// The string member `key`, or `fallback` when absent, null or not a string.
[[nodiscard]] std::string string_or(const rapidjson::Value& v, const char* key,
                                    std::string fallback = {});

/// The string `v` holds, or "" when `v` is null or not a string.
[[nodiscard]] std::string string_of(const rapidjson::Value* v);

/// The integer member `key` (an integral number; a double with an integral value is accepted).
[[nodiscard]] std::optional<std::int64_t> int_of(const rapidjson::Value& v, const char* key);

/// The boolean member `key`, or `fallback` when absent or not a boolean.
[[nodiscard]] bool bool_or(const rapidjson::Value& v, const char* key, bool fallback = false);

/// The string members of the JSON object `text` (labels); members of other types are left out,
/// and text that is not an object reads as empty.
[[nodiscard]] std::map<std::string, std::string> string_members(std::string_view text);

/// A value as text: strings as they are, numbers and the rest as compact JSON, null as "".
[[nodiscard]] std::string text_of(const rapidjson::Value& v);

/// Writes a stored JSON text as a raw value (it was validated when stored); null when empty.
void raw(writer& w, std::string_view json_text);

/// Writes an optional timestamp as RFC 3339, or null when 0.
void timestamp(writer& w, timestamp_us t);

/// Escapes a string into a JSON string literal, with the quotes.
[[nodiscard]] std::string quote(std::string_view s);
/// `quote(s)` appended to `out`.
void quote_into(std::string& out, std::string_view s);

/// The offset of the first byte of `s` that is not part of valid UTF-8, or nullopt.
[[nodiscard]] std::optional<std::size_t> invalid_utf8_at(std::string_view s);

} // namespace sreh::json
