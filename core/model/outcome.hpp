#pragma once
// What a run achieved, beside how it ended. A run's state says whether it ran to its end
// (succeeded), broke (failed) or was stopped (cancelled); its outcome says what that end means
// for the incident: a run that concluded normally may still have left the fault in place, or
// been denied the action it needed. Pure: derived from the journal when the run ends.

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/run.hpp"
#include "core/model/step.hpp"

namespace sreh::outcome {

inline constexpr std::string_view mitigated = "mitigated"; // acted, and the fix verified
inline constexpr std::string_view partial = "partial";     // acted, the fix verified in part
inline constexpr std::string_view not_mitigated = "not_mitigated"; // acted, the fault remains
inline constexpr std::string_view unverified = "unverified";       // acted, nothing verified it
inline constexpr std::string_view denied = "denied";           // the action it needed was refused
inline constexpr std::string_view diagnosed = "diagnosed";     // a cause found, nothing done
inline constexpr std::string_view no_fault = "no_fault";       // nothing anomalous found
inline constexpr std::string_view unexplained = "unexplained"; // anomalies nothing explains
inline constexpr std::string_view completed = "completed";     // a flow ran to its end

/// Every outcome, for documentation and validation.
inline constexpr std::string_view all[] = {mitigated, partial,  not_mitigated, unverified, denied,
                                           diagnosed, no_fault, unexplained,   completed};

/// Whether a tool changes something (its risk is not read-only).
using mutating_fn = std::function<bool(std::string_view tool)>;

/// The outcome of a run of `kind` ("goal" or "flow") that ended in `state` after `steps`. A
/// conclusion that states a structured result (`detail.result.outcome` and `.recovery`, the
/// builtin reasoner's contract) is read first; otherwise the journal decides: denied actions,
/// executed ones, and the post-condition checks and flow waits that judged them. "" when the
/// run's state says all there is (failed or cancelled before anything was decided).
[[nodiscard]] std::string of_run(std::string_view kind, run_state state,
                                 const std::vector<step>& steps, const mutating_fn& mutating);

} // namespace sreh::outcome
