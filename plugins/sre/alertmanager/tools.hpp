#pragma once
// The Alertmanager toolset (docs/alertmanager.md): alertmanager.alerts (read-only) and
// alertmanager.silence (mutating, risk low), over Alertmanager's API v2
// (../shared/refs/alertmanager/api-v2-openapi.yaml). A silence carries the call's idempotency
// key in its comment, so that `reconcile` finds it after a crash and `compensate` expires it.

#include "actors/tools/tool.hpp"
#include "plugins/sre/alertmanager/settings.hpp"

namespace sreh::plugins::alertmanager {

/// Adds alertmanager.alerts and alertmanager.silence for the server of `cfg` (url set).
void add_alertmanager_tools(actors::tool_registry& out, const settings& cfg);

} // namespace sreh::plugins::alertmanager
