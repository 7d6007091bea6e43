#pragma once
// The audit chain's verification of a PostgreSQL store (the chain is
// persistence/audit/audit.hpp's).

#include <string>

#include "core/base/expected.hpp"
#include "persistence/audit/audit.hpp"

namespace sreh::persistence {

/// Checks the whole chain of the store at `url` (tables in `schema`; empty: the connection's
/// search_path) on its own connection, in seq order, a page at a time through a cursor (constant
/// memory), in one read-only repeatable-read transaction: one consistent snapshot while the
/// cluster keeps committing. `progress` as verify_audit_chain's. Returns the report, or an error
/// naming the host and database (never the password) when the store cannot be read.
[[nodiscard]] expected<audit_report> verify_postgres_audit_chain(const std::string& url,
                                                                 const std::string& schema,
                                                                 const audit_progress& progress);

} // namespace sreh::persistence
