#pragma once
// Context assembly: what a model is told on each turn of a run, within a token budget, by a
// stated strategy (docs/models.md). Pure: the caller gathers the inputs from the run and its
// journal, and journals the report with the reason step.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/llm/types.hpp"
#include "core/model/observation.hpp"
#include "core/model/step.hpp"

namespace sreh::llm {

/// One earlier step of the run as the model saw it: the text it said with it (`thought`), the
/// tool call it made and what came back; or, with no call, a note (a conclusion so far, an
/// observation the run recorded). `journal_step` is where the full result lives.
struct prior_step {
  std::int64_t journal_step = 0;
  std::string thought;
  bool has_call = false;
  tool_call call;
  std::string result; // the tool's result (JSON or text) or the note's text
  bool is_error = false;
  bool conclusion_bearing = false; // kept in full whatever its age
  std::int64_t message_seq = 0;    // a person's message to the run (a user turn): its seq
};

/// The prior steps of a journal as the model saw them: a finished `tool` step is a call with its
/// result (a failed or in-doubt one an error result naming its state), a `conclude` step a
/// conclusion-bearing note, a `message` step (what a person said to the run,
/// docs/conversation.md) a user turn naming who said it and when; steps still at their intent,
/// the run's recall (its memories are `context_input::memories`) and the other kinds (the
/// kernel's replies among them) are left out. The
/// thought comes from the step's decision JSON (`thought`), the call id from its
/// `tool_call_id` when the gateway recorded one, else `call_<n>`.
[[nodiscard]] std::vector<prior_step> prior_steps_of(const std::vector<step>& journal);
/// One step as `prior_steps_of` shows it; nothing for a step the model is not shown.
[[nodiscard]] std::optional<prior_step> prior_step_of(const step& s);

/// `prior_steps_of` kept between the turns of one run: each turn converts only the steps that
/// are new or changed since the last (a run's journal only grows, and a finished step stays as
/// it is), so a turn's cost does not grow with the run's length. One per run, on its actor.
class prior_steps_cache {
 public:
  /// Applied to each step once, as it is converted (the provider's tool names on the wire).
  using fixup_fn = std::function<void(prior_step&)>;
  /// The prior steps of `journal`, as `prior_steps_of` returns them (then `fixup`).
  [[nodiscard]] const std::vector<prior_step>& of(const std::vector<step>& journal,
                                                  const fixup_fn& fixup);

 private:
  struct slot {
    std::int64_t n;
    step_state state;
    std::size_t result_size, decision_size;
    bool shown; // it has an entry in steps_
  };
  std::vector<slot> slots_; // by journal position
  std::vector<prior_step> steps_;
};

struct context_input {
  std::string system_prompt; // versioned and pinned per run by the caller
  std::string goal;
  std::vector<std::pair<std::string, std::string>> labels; // the alert's labels
  std::string snapshot; // the Work / world snapshot as text; empty when there is none
  /// What the run recalled from long-term memory before its first step (best first): sent with
  /// the goal, each with its id and version for the model to cite.
  std::vector<obs::past_case> memories;
  std::vector<tool_spec> tools;
  std::vector<prior_step> steps; // oldest first
  /// When set, the steps instead of `steps`, not copied (a run's prior_steps_cache).
  const std::vector<prior_step>* kept_steps = nullptr;
  std::string model;
  std::int64_t max_tokens = 1024; // the answer's limit (not part of the input budget)
  std::optional<double> temperature;
  bool stream = false;
};

struct context_budget {
  std::int64_t max_input_tokens = 16'000; // the prompt's limit: the model's window − max_tokens
  std::size_t keep_last = 4;              // the last K steps are never summarized
  std::size_t max_result_bytes = 16'384;  // a longer result is truncated (budget.max_result_bytes)
  std::size_t summary_bytes = 160;        // the head of a result kept in its summary
};

/// What assembly left out, for the reason step's journal entry.
struct trim_report {
  std::int64_t estimated_tokens = 0; // of the assembled request
  std::int64_t budget_tokens = 0;
  std::size_t truncated = 0;  // results cut at max_result_bytes
  std::size_t summarized = 0; // older results replaced by a summary
  std::size_t omitted = 0;    // oldest steps left out (call and result together)
  std::size_t bytes_removed = 0;
  bool over_budget = false;                // even the parts always kept do not fit
  std::vector<std::int64_t> messages_seen; // the seqs of the people's messages sent (not left out)
};

struct assembled_context {
  chat_request request;
  trim_report report;
};

/// The token estimate the budget is counted in: ceil(bytes / 4) (no tokenizer is pure and
/// model-independent; 4 bytes a token is the usual figure for English and JSON).
[[nodiscard]] std::int64_t estimate_tokens(std::string_view text);

/// The estimate for a whole request: its texts, arguments and tool catalog, plus a small
/// overhead per message and tool.
[[nodiscard]] std::int64_t estimate_tokens(const chat_request& req);

/// Builds the request. The strategy, in order, until the estimate fits the budget:
///   1. every result over max_result_bytes is truncated, ending with a pointer to
///      "journal step N" (always, whatever the budget);
///   2. the oldest results, except the last `keep_last` steps and conclusion-bearing ones, are
///      replaced by a one-line summary (their head and size) with the same pointer;
///   3. the oldest such steps are left out, call and result together, and the first user message
///      says which journal steps were left out.
/// The system prompt, the goal, labels, snapshot, memories, tool catalog, the last K steps and the
/// conclusion-bearing ones are always sent in full (report.over_budget when they alone exceed).
/// A tool call is never sent without its result, nor a result without its call.
[[nodiscard]] assembled_context assemble_context(const context_input& in,
                                                 const context_budget& budget);

} // namespace sreh::llm
