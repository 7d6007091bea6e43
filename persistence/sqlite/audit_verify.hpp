#pragma once
// The audit chain's verification of a SQLite file (the chain is persistence/audit/audit.hpp's).

#include <string>

#include "core/base/expected.hpp"
#include "persistence/audit/audit.hpp"

namespace sreh::persistence {

/// Checks the whole chain of the SQLite database `sqlite_path` on its own read-only connection,
/// in seq order, streaming (constant memory), on one consistent snapshot (a node may keep
/// writing). Returns the report, or an error when the file cannot be read (missing file, not a
/// sreh database, schema without the chain).
[[nodiscard]] expected<audit_report> verify_audit_chain(const std::string& sqlite_path,
                                                        const audit_progress& progress);

} // namespace sreh::persistence
