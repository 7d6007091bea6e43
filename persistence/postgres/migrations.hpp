#pragma once

#include <pqxx/connection>
#include <pqxx/transaction>

#include <string>

#include "core/base/expected.hpp"

namespace sreh::persistence::pg {

/// The version the last migration of this build reaches.
[[nodiscard]] int last_schema_version();

/// Brings the schema `schema` (empty: the first of the search_path) up to the last version:
/// creates the schema and the `schema_version` table when missing, then applies each missing
/// migration in its own transaction under the commit lock (so two nodes starting at once
/// migrate one after the other), recording its version in the same transaction; then creates
/// this build's commit function when the schema lacks it. A schema newer
/// than this build is an error naming both versions. Throws libpqxx exceptions (the caller
/// translates them); returns an error for what is not an exception.
[[nodiscard]] sreh::error migrate(pqxx::connection& c, const std::string& schema);

/// Creates this build's commit function (pg_sql.hpp) in the current schema when it is missing.
/// Call with the commit lock held (as `migrate` does).
void create_commit_function(pqxx::work& tx);

} // namespace sreh::persistence::pg
