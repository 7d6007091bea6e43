#pragma once

#include <string>

#include "app/serve/plugins.hpp"
#include "config/node/node_config.hpp"
#include "core/base/expected.hpp"

namespace sreh::app {

/// The node config of `file` (or the defaults when "") with the command line's settings `set`,
/// read and finalized with the Work kinds and config sections of `regs`: what `sreh serve` runs
/// with (and `sreh replay`).
[[nodiscard]] expected<config::node_config> load_node_config(const std::string& file,
                                                             const config::overrides& set,
                                                             const node_registries& regs);

/// `sreh serve [--config FILE] [--node-id ID] [--listen HOST:PORT] [--data-dir DIR]`: runs a node
/// until SIGINT or SIGTERM. The options replace the file's settings before it is validated.
/// Returns the process exit code.
int serve_command(int argc, char** argv);

/// `sreh config check FILE [--node-id ID]`: validates a config file (and its topology, in cluster
/// mode); prints the first error as FILE:LINE:COL, or a summary and the topology.
int config_check_command(int argc, char** argv);

} // namespace sreh::app
