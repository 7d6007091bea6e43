#pragma once

#include <string>

namespace sreh::app {

/// Runs a client subcommand (`submit`, `runs`, `show`, `watch`, `cancel`, `approvals`, `approve`,
/// `deny`) against a node's HTTP API. `argv` holds the arguments after the command name. Common
/// options: `--server HOST:PORT` (default: $SREH_SERVER, else 127.0.0.1:7070) and
/// `--token-file F`; every request carries `Authorization: Bearer` with $SREH_TOKEN, else the
/// token file, else ./data/admin.token when readable.
///
/// Exit codes: 0 ok, 1 the server said no (its problem detail is printed), 2 usage error,
/// 3 cannot reach the server. `watch` (and `submit --watch`) exit 0 when the run succeeded,
/// 1 when it failed, 2 when it was cancelled.
[[nodiscard]] int run_client_command(const std::string& cmd, int argc, char** argv);

/// `sreh token hash TOKEN` / `sreh token new`: offline helpers for writing `auth.tokens`.
[[nodiscard]] int token_command(int argc, char** argv);

} // namespace sreh::app
