#pragma once

#include <rapidjson/document.h>

#include <string>
#include <string_view>

#include "core/base/status.hpp"

namespace sreh::json {

/// Validates `value` against a JSON schema (the subset tool schemas use: type (one or a list),
/// properties, required, additionalProperties (bool), enum, minimum, maximum, minLength,
/// maxLength, items, minItems, maxItems). The error names the path of the offending value, e.g.
/// "field 'replicas': expected an integer >= 1, got 0". Unsupported keywords are ignored.
[[nodiscard]] sreh::error validate(const rapidjson::Value& schema, const rapidjson::Value& value);

/// Parses both texts and validates; a schema that is not valid JSON is an internal error.
[[nodiscard]] sreh::error validate(std::string_view schema_json, std::string_view value_json);

} // namespace sreh::json
