#pragma once
// Two journals side by side, step by step: a recorded run and its replay (eval/replay.hpp), a
// run and a fork of it (docs/fork.md). Pure.

#include <cstdint>
#include <string>
#include <vector>

#include "core/model/run.hpp"
#include "core/model/step.hpp"

namespace sreh::journal {

/// What the two journals are called in the differences ("tool: recorded X, replay Y").
struct sides {
  std::string a = "recorded", b = "replay";
  std::string a_run = "recording", b_run = "replay"; // "the recording has no step 12"
  /// The second journal's reason steps answered with the first's answers (a replay): a request
  /// that hashed otherwise still got the recorded answer.
  bool same_answers_recorded = true;
  /// The second journal ran live from this step on (a fork: 0 = none did): there a tool's result
  /// or a conclusion's text is what the world said then, not a choice, and only the choices —
  /// kind, tool, arguments, policy, state, a model's answer — count as a difference.
  std::int64_t live_from = 0;
};

/// One step of the comparison: step `n` of the first journal beside step `n` of the second.
struct step_comparison {
  std::int64_t n = 0;
  std::string recorded; // "tool sandbox.rollback {"service":"checkout"} succeeded", "" = none
  std::string replayed;
  bool same = false;
  std::string difference; // what differs, when !same
};

struct comparison {
  std::vector<step_comparison> steps;
  std::int64_t first_divergence = 0;    // the first step that differs; 0 = none
  std::int64_t reason_steps = 0;        // in the first journal
  std::int64_t same_request_hashes = 0; // of those, the ones whose request hashed the same
};

/// One line for step `s`: "tool sandbox.rollback {"service":"checkout"} succeeded".
[[nodiscard]] std::string describe(const step& s);
/// What differs between step `a` of the first journal and step `b` of the second ("" = the same).
[[nodiscard]] std::string difference(const step& a, const step& b, const sides& names = {});
/// "succeeded: <conclusion>", "failed: <error>".
[[nodiscard]] std::string end_of(const run& r);
/// The steps of `a` beside those of `b`: each step, the first divergence and the reason steps
/// whose requests hashed the same.
[[nodiscard]] comparison compare(const std::vector<step>& a, const std::vector<step>& b,
                                 const sides& names = {});

} // namespace sreh::journal
