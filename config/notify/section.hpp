#pragma once
// The `notify:` section of the node config (core/notify/settings.hpp, docs/notifications.md),
// registered by the composition root (app/serve) like the plugins' sections. Errors are
// `FILE:LINE:COL: notify.receivers[1].webhook.url: what`.

#include "config/node/sections.hpp"

namespace sreh::config {

/// Registers `notify:`; its check runs once the section is whole (every route names a
/// receiver that exists).
void register_notify_section(section_registry& r);

} // namespace sreh::config
