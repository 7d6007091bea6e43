#pragma once
// The plugins' sections of the node config (config/node/sections.hpp): each plugin states its
// settings type and its reader, and the composition root (app/serve) registers them before it
// loads the config. Apart from plugins/register.hpp, which includes it, because these need
// nothing but config/: the loaders' fuzz targets compile the plugins' readers alone.

#include "config/node/sections.hpp"

namespace sreh::plugins {

/// `sandbox:` (plugins/tools/sandbox, `sandbox::settings`): the scenario file and time scale.
void register_sandbox_section(config::section_registry& r);

/// `tools.http_probe:` (plugins/sre/probe, `http_probe::settings`): the hosts and the limits.
void register_http_probe_section(config::section_registry& r);

/// `tools.shell:` (plugins/sre/shell, `shell::settings`): the allow-listed commands.
void register_shell_section(config::section_registry& r);

/// `prometheus:` (plugins/sre/prometheus, `prometheus::settings`): the server, the query guards
/// and the reasoner's entity metrics.
void register_prometheus_section(config::section_registry& r);

/// `alertmanager:` (plugins/sre/alertmanager, `alertmanager::settings`): the tools' server and
/// the webhook receiver, whose template `finalize` checks against the loaded Work templates.
void register_alertmanager_section(config::section_registry& r);

} // namespace sreh::plugins
