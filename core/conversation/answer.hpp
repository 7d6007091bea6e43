#pragma once
// How the agent answers a question about a run, live or ended (docs/conversation.md,
// "Questions"): from the run's own account of its journal — the postmortem document
// (core/postmortem), which reads the same steps the same way whether the run still works or has
// ended. A question is about one of a few topics, found by its words:
//
//   why           "why checkout?", "why do you think it is the deploy?", "what caused it?"
//   alternatives  "what else could it have been?", "what did you rule out?", "why not the db?"
//   actions       "what did you do?", "who approved the rollback?"
//   unexplained   "what is left unexplained?", "anything still open?"
//   status        anything else: what the run is doing (or did) and its last step
//
// An answer cites the steps its facts come from, as "step N", and only steps the journal has.
// Pure: the same question on the same journal gives the same answer.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/conversation/message.hpp"
#include "core/model/step.hpp"
#include "core/postmortem/postmortem.hpp"

namespace sreh::conversation {

enum class topic { why, alternatives, actions, unexplained, status };

[[nodiscard]] const char* to_string(topic t);

/// What `question` asks about (see above).
[[nodiscard]] topic topic_of(std::string_view question);

struct answer {
  topic about = topic::status;
  std::string text;
  std::vector<std::int64_t> cited; // the steps the text cites, in the order it cites them, once
};

/// The steps `text` names as "step N", in order, each once (what a reply cites).
[[nodiscard]] std::vector<std::int64_t> cited_in(std::string_view text);

/// The result a `reply` step journals: `{"in_reply_to": SEQ, "cites": [N, ...]}`, citing the
/// steps the text names that the journal has (1 to `last_step`).
[[nodiscard]] std::string reply_json(std::int64_t question_seq, std::string_view text,
                                     std::int64_t last_step);

/// The last user turn of the request that asks a model run's model the question `q` (the rest
/// of the request is the run's own context): who asks and when, the question, and how to answer
/// — in text, from the run's steps, citing them as "step N".
[[nodiscard]] std::string model_question(const message& q);

/// A model's answer `text` to a question on a run whose journal has `last_step` steps, as the
/// reply says it: the text, and a last line naming any step it cites that the journal does not
/// have (a model may invent one; a reply never lets it stand).
[[nodiscard]] std::string checked_model_answer(std::string_view text, std::int64_t last_step);

/// The answer to `question` from the document `d` of the run whose journal is `steps`.
[[nodiscard]] answer answer_from(std::string_view question, const postmortem::document& d,
                                 const std::vector<step>& steps);

} // namespace sreh::conversation
