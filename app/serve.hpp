#pragma once

namespace sreh::app {

/// `sreh serve [--config FILE] [--listen HOST:PORT] [--data-dir DIR]`: runs a node until SIGINT
/// or SIGTERM. Returns the process exit code.
int serve_command(int argc, char** argv);

/// `sreh config check FILE`: validates a config file; prints the first error as FILE:LINE:COL.
int config_check_command(int argc, char** argv);

} // namespace sreh::app
