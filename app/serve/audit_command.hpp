#pragma once

namespace sreh::app {

/// `sreh audit verify [--config FILE] [--node-id ID] [--data-dir DIR] | --db FILE`: checks the
/// hash chain of the node's event log (the audit log) in its store: the SQLite file (default
/// ./data/sreh.db) or, when the config's store is PostgreSQL, the cluster's database. `argv`
/// holds the arguments after `audit`. Prints progress to stderr on long logs, then the verdict
/// on stdout.
///
/// Exit codes: 0 the chain is intact, 1 it is broken (the first bad entry is named) or the store
/// cannot be read (the file or database is named), 2 usage error.
[[nodiscard]] int audit_command(int argc, char** argv);

} // namespace sreh::app
