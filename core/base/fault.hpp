#pragma once

#include <cstdint>
#include <string_view>

namespace sreh {

/// Test hook for the supervision tests: a named point where a part of the node fails as a bug
/// would (its caller throws when this returns true). Unlike `failpoint`, the process survives:
/// the node's supervisor sees the part die and restarts it.
///
/// A point is armed with `NAME:N` — in the environment variable SREH_FAULT (a comma-separated
/// list, read once, e.g. `http.io:3,relay.round:2`) or by `arm_fault` — and then `fault(NAME)`
/// is true exactly once, at its N-th call; `NAME:N+` makes it true at the N-th call and at every
/// call after it (a part that dies each time it is restarted). Points:
/// - `http.io`: the HTTP front's io loop, after it read a request's header;
/// - `relay.round`: the relay thread, after a page was published and before its offset is stored;
/// - `works.orchestrator`: the orchestrator, on a request to make a Work, before it made it;
/// - `works.command`: a Work's actor, on a person's command, before it handled it;
/// - `kernel.submit`: the kernel, on a new goal, before it made the run (runs under way die
///   with it: their actors are linked to it);
/// - `run.create`: a run's actor, as it makes the run (before its row is committed);
/// - `run.step`: a run's actor, as it starts a step (the previous one is committed);
/// - `gateway.call`: the model gateway, as a call enters it (on the calling run's actor).
///
/// Thread-safe. Costs one relaxed atomic load when nothing is armed.
[[nodiscard]] bool fault(std::string_view name);

/// Arms `name` to fire at its `n`-th call from now (n >= 1) and, with `every`, at each call
/// after it, replacing an earlier arming.
void arm_fault(std::string_view name, std::int64_t n, bool every = false);

} // namespace sreh
