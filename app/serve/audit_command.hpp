#pragma once

namespace sreh::app {

/// `sreh audit verify [--data-dir DIR | --db FILE]`: checks the hash chain of the node's event
/// log (the audit log) in the SQLite file (default ./data/sreh.db). `argv` holds the arguments
/// after `audit`. Prints progress to stderr on long logs, then the verdict on stdout.
///
/// Exit codes: 0 the chain is intact, 1 it is broken (the first bad entry is named) or the file
/// cannot be read (the path is named), 2 usage error.
[[nodiscard]] int audit_command(int argc, char** argv);

} // namespace sreh::app
