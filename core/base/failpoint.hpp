#pragma once

#include <cstdint>
#include <string_view>

namespace sreh {

/// Crash-test hook. When the environment variable SREH_FAILPOINT is `NAME:N` (e.g.
/// `after_intent:3`), the process kills itself with SIGKILL the first time `failpoint(NAME, N)`
/// is reached — the exact moment a kill -9 must be survived. Points used by the kernel:
/// `after_intent` (intent of step N committed, side effect not started), `after_effect` (tool of
/// step N returned, outcome not committed), `after_outcome` (outcome of step N committed). The
/// Alertmanager receiver's (N = 1): `alertmanager_created` (a notification's Work committed, its
/// alerts not merged yet), `alertmanager_committed` (everything committed, the answer not sent).
/// The notifier's (N = 1): `notify_enqueue` (a round's deliveries made, not stored),
/// `notify_sent` (a receiver answered, the attempt not recorded).
/// Costs one integer compare when unset.
void failpoint(std::string_view name, std::int64_t n);

} // namespace sreh
