#pragma once
// The audit chain's verification of a SQLite file (the chain is persistence/audit/audit.hpp's).

#include <cstdint>
#include <functional>
#include <string>

#include "core/base/expected.hpp"
#include "persistence/audit/audit.hpp"

namespace sreh::persistence {

/// Checks the whole chain of the SQLite database `sqlite_path` on its own read-only connection,
/// in seq order, streaming (constant memory), on one consistent snapshot (a node may keep
/// writing). `progress(done, total)` is called every few thousand entries and at the end
/// (`total` is the last seq at the start); it may be empty. Returns the report, or an error
/// when the file cannot be read (missing file, not a sreh database, schema without the chain).
[[nodiscard]] expected<audit_report>
verify_audit_chain(const std::string& sqlite_path,
                   const std::function<void(std::int64_t done, std::int64_t total)>& progress);

} // namespace sreh::persistence
