#pragma once

namespace sreh::app {

/// `sreh serve [--config FILE] [--node-id ID] [--listen HOST:PORT] [--data-dir DIR]`: runs a node
/// until SIGINT or SIGTERM. The options replace the file's settings before it is validated.
/// Returns the process exit code.
int serve_command(int argc, char** argv);

/// `sreh config check FILE [--node-id ID]`: validates a config file (and its topology, in cluster
/// mode); prints the first error as FILE:LINE:COL, or a summary and the topology.
int config_check_command(int argc, char** argv);

} // namespace sreh::app
