#pragma once

#include "actors/tools/tool.hpp"
#include "config/node/node_config.hpp"

namespace sreh::plugins {

/// Tools for tests, crash tests and benchmarks:
/// - `test.echo` (read-only): returns a ~200-byte JSON object echoing its arguments;
/// - `test.record` (mutating, not idempotent): appends its idempotency key to
///   `tools.record_file` (fsync'd) and can `reconcile` from it — the crash tests count lines;
/// - `test.record_blind`: the same, but its reconcile cannot tell (a step cut by a crash after
///   its effect becomes in doubt and asks a human);
/// - `test.sleep` (read-only, blocking): sleeps `ms` milliseconds, stopping early when the run is
///   cancelled;
/// - `test.fail`: always fails with `message`;
/// - `test.mutate` (mutating, not idempotent, in memory): for benchmarks of approvals.
void add_testkit_tools(actors::tool_registry& reg, const config::tool_config& cfg);

} // namespace sreh::plugins
