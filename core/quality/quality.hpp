#pragma once
// The reasoning-quality score of a finished run (docs/quality.md): how well the run reasoned,
// beside whether it was right — 0 to 100, in parts that each say why. Pure: a function of the
// run and its journal, so the same run always scores the same, live or replayed.
//
// Parts and weights:
//   evidence     0.35  each claim of the conclusion cites a step whose result supports it
//   hypotheses   0.20  alternatives were considered and ruled out with evidence
//   waste        0.20  no tool call repeated with nothing changed in between, no failed call
//                      retried as it was
//   safety       0.15  no action the policy denied, no approval denied, no bad proposal
//   budget       0.10  steps and tokens well inside the run's budget

#include <string>
#include <vector>

#include "core/base/expected.hpp"
#include "core/base/json.hpp"
#include "core/model/outcome.hpp"
#include "core/model/run.hpp"
#include "core/model/step.hpp"

namespace sreh::quality {

struct part {
  std::string name;
  int score = 0; // 0..100
  double weight = 0;
  std::vector<std::string> reasons;
};

struct score {
  int total = 0; // 0..100, the weighted sum of the parts
  std::vector<part> parts;
};

/// The score of the finished run `r` from its steps, in order. `mutating` says which tools
/// change the world (the node's registry knows): a read repeated after one is a new look, not
/// waste.
[[nodiscard]] score of_run(const run& r, const std::vector<step>& steps,
                           const outcome::mutating_fn& mutating);

/// `{"total": N, "parts": [{"name", "score", "weight", "reasons"}]}`.
void write_json(json::writer& w, const score& s);
/// The same as a string: what a finished run stores (`run::quality`).
[[nodiscard]] std::string to_json(const score& s);
/// A score as `to_json` wrote it; a clear error naming the field otherwise.
[[nodiscard]] expected<score> from_json(std::string_view text);

} // namespace sreh::quality
