#pragma once
// Reading a journaled step: its arguments as canonical text, its policy effect, whether the tool
// was really called — what comparing two journals (compare.hpp) and answering from a recording
// (eval/replay) need of each step.

#include <rapidjson/document.h>

#include <optional>
#include <string>

#include "core/model/step.hpp"

namespace sreh::journal {

/// Arguments as one canonical text (the model's spacing does not matter).
[[nodiscard]] std::string canonical(const std::string& args);
/// A tool and its canonical arguments as one key.
[[nodiscard]] std::string key_of(const std::string& tool, const std::string& args);
/// `text` ("" as "{}") parsed, when it is a JSON object.
[[nodiscard]] std::optional<rapidjson::Document> object_of(const std::string& text);
/// The policy effect journaled with a tool step ("" when none).
[[nodiscard]] std::string policy_effect(const step& s);
/// The policy rule journaled with a tool step ("" when none).
[[nodiscard]] std::string policy_rule(const step& s);
/// Whether tool step `s` undid another one.
[[nodiscard]] bool is_compensation(const step& s);
/// Whether the tool was called for step `s` (not refused by policy, by validation or before
/// the call), so that its result is the tool's.
[[nodiscard]] bool was_called(const step& s);
/// At most `width` characters of `s` on one line.
[[nodiscard]] std::string clip(std::string s, std::size_t width = 60);

} // namespace sreh::journal
