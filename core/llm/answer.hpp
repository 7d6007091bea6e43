#pragma once
// A model's final answer, read the way the builtin reasoner's conclusion is read: the text an
// SRE reads, and the structured result the answer may end with (docs/models.md, "The
// conclusion") — the same shape as the builtin's `detail.result`, so sreh eval and the
// quality score judge a model run as they judge a builtin one.

#include <string>
#include <string_view>

namespace sreh::llm {

struct final_answer {
  std::string text;   // the answer without its structured result (trimmed)
  std::string result; // a JSON object, or "" when the answer carries none
};

/// Splits `answer` into its text and the JSON object it ends with: a fenced ```json block, or an
/// object that closes the answer. The object counts only when it has `detected` (a boolean) or
/// `diagnoses` (an array of objects with string `target` and `kind`); evidence given as step
/// numbers (`[3, 5]`) becomes `[{"step": 3}, {"step": 5}]`. Anything else leaves the whole
/// answer as text and no result: a model that answers in prose is never refused for it.
[[nodiscard]] final_answer split_final_answer(std::string_view answer);

} // namespace sreh::llm
