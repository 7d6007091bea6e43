#pragma once
// The replay's journal beside the recording's, step by step (internal to eval/replay).

#include <string>
#include <vector>

#include "core/model/run.hpp"
#include "core/model/step.hpp"
#include "eval/replay.hpp"

namespace sreh::eval::detail {

/// One line for step `s`: "tool sandbox.rollback {"service":"checkout"} succeeded".
[[nodiscard]] std::string describe(const step& s);
/// What differs between recorded step `a` and replayed step `b` ("" = the same).
[[nodiscard]] std::string difference(const step& a, const step& b);
/// "succeeded: <conclusion>", "failed: <error>".
[[nodiscard]] std::string end_of(const run& r);
/// Compares the recorded steps `recorded` with the replayed ones into `out`: its steps, the
/// first divergence and the reason steps whose requests hashed the same.
void compare_steps(const std::vector<step>& recorded, const std::vector<step>& replayed,
                   replay_report& out);

} // namespace sreh::eval::detail
