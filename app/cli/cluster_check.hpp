#pragma once

#include <string_view>

#include "config/topology/topology.hpp"

namespace sreh::app {

/// `sreh cluster check TOPOLOGY_FILE [--timeout-ms N]`: validates a topology file, then probes
/// every node's http and cluster address with a plain TCP connect (timeout: N, default the
/// file's connection_timeout_ms) and prints one line per node. `argv` holds the arguments after
/// `cluster`.
///
/// Exit codes: 0 every address is reachable, 1 the file is invalid or an address is unreachable
/// (the node, the address and the reason are named), 2 usage error.
[[nodiscard]] int cluster_command(int argc, char** argv);

/// Prints the cluster's settings and one line per node to stdout, marking `this_node` (if any).
void print_topology(const config::topology& t, std::string_view this_node);

} // namespace sreh::app
