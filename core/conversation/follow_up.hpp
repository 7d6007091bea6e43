#pragma once
// Follow-up runs (docs/conversation.md, "Follow-ups"): after a run ends, "do the same for the
// eu-west copy" starts a new run whose context begins with what the parent concluded and on which
// evidence. The parent is untouched; the follow-up names it (`follow_up_of`) and starts from it:
//
//   - its `context` (as a Work's run has, core/works/conversation.hpp): the parent's goal, state
//     and conclusion, each cause with its evidence steps, what was done and who approved it, what
//     did not work and what was left to follow up — what a model reads as "Current state";
//   - its `priors`: the parent's causes as {kind, target}, which the builtin reasoner weighs as it
//     weighs a past case recalled from memory — checked first, concluded only on new evidence.
//
// All of it is in the run's spec, so recovery, replay and a fork see the same start.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/run.hpp"
#include "core/postmortem/postmortem.hpp"

namespace sreh::conversation {

/// The most of the parent's account a follow-up's context holds.
inline constexpr std::size_t max_follow_up_context = 8 * 1024;

/// A cause the parent concluded, as a prior of its follow-up.
struct prior {
  std::string kind;   // the failure mode (`bad_deploy`)
  std::string target; // what it was on
};

/// What a run's spec says of the run it follows up.
struct follow_up {
  std::string of; // the parent's id
  std::vector<prior> priors;
};

/// The context text a follow-up of `parent` starts with, from the parent's postmortem document
/// `d`: at most `max_bytes`, the evidence of the later causes left out first, and the text says so.
[[nodiscard]] std::string follow_up_context(const run& parent, const postmortem::document& d,
                                            std::size_t max_bytes = max_follow_up_context);

/// The spec of a follow-up of `parent`: `{"context": TEXT, "follow_up_of": ID, "priors":
/// [{"kind","target"}, ...]}`.
[[nodiscard]] std::string follow_up_spec(const run& parent, const postmortem::document& d);

/// The follow-up part of a run's spec; none when the run follows up no run.
[[nodiscard]] std::optional<follow_up> follow_up_of(std::string_view spec);

} // namespace sreh::conversation
