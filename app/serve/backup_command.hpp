#pragma once

namespace sreh::app {

/// `sreh backup DIR [--config FILE] [--node-id ID] [--data-dir D]`: a consistent copy of the
/// node's SQLite store, taken while the node runs (SQLite's online backup API on one snapshot),
/// with the data dir's token files and a manifest (`backup.json`: when, from where, schema
/// version, runs, the last event and its audit hash). DIR must be new or empty. The copy's audit
/// chain is verified before the command answers. `argv` holds the arguments after `backup`.
///
/// Exit codes: 0 backed up and verified, 1 failed (or the copy's chain is broken: the copy is
/// kept and the entry named), 2 usage error.
[[nodiscard]] int backup_command(int argc, char** argv);

/// `sreh restore DIR [--config FILE] [--node-id ID] [--data-dir D] [--force]`: puts the store of
/// the backup in DIR in the node's place after checking it (SQLite's quick_check, the manifest's
/// figures, the audit chain up to the manifest's last hash). Refused while a node holds the data
/// dir; an existing store is replaced only with --force and is then kept beside it
/// (`sreh.db.before-restore-<time>`). Token files are restored where the data dir has none.
///
/// Exit codes: 0 restored, 1 refused or failed (nothing was changed), 2 usage error.
[[nodiscard]] int restore_command(int argc, char** argv);

} // namespace sreh::app
