#pragma once
// A flow run's inputs, checked against the flow's typed inputs: what `POST /v1/flows/{name}/runs`
// (not built yet) and a `flow` step's call both need. Pure.

#include <rapidjson/document.h>

#include <map>
#include <string>
#include <string_view>

#include "core/base/expected.hpp"
#include "core/expr/expression.hpp"
#include "core/flows/flow.hpp"

namespace sreh::flows {

/// `v` as a value of `in`'s type, as canonical JSON: a string; a number; true / false; a
/// duration as whole seconds (given as "5m" or as a number of seconds); a list of strings. The
/// error (invalid_argument) reads "inputs.NAME: expected a number, got string".
[[nodiscard]] expected<std::string> input_value(const input_spec& in, const rapidjson::Value& v);

/// An input written as text (`sreh flow run --input k=v`, a Work template's `{field}`) as JSON of
/// its type, before `input_value` checks it: a number or true/false as written (else the text,
/// which then fails the check naming the input), a list split at commas, the rest the text (a
/// duration as "5m").
[[nodiscard]] std::string input_from_text(const input_spec& in, std::string_view text);

/// A run's inputs from a JSON object (`{"host": "g1", "below": 0.7}`): every key an input of `f`,
/// each value of its type, defaults filled in, every required one given. By name, as canonical
/// JSON. Errors (invalid_argument) name the input.
[[nodiscard]] expected<std::map<std::string, std::string>>
resolve_inputs(const flow& f, std::string_view inputs_json);

/// What a resolved input (canonical JSON) reads as in a placeholder: a string's text, a list's
/// items joined with ",", anything else its JSON.
[[nodiscard]] std::string placeholder_text(std::string_view value_json);

/// What a resolved input compares as in an expression (`inputs.NAME`): a number (durations in
/// seconds), a string or a boolean; an error for a list.
[[nodiscard]] expected<expr::value> expression_value(std::string_view value_json);

} // namespace sreh::flows
