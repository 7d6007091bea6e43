#pragma once
// The SQL of the evolution gate's candidates in the PostgreSQL store (candidates.cpp, schema
// 12). Written row by row inside the commit's transaction, like Works and memories: a candidate
// changes a few times in its life.

#include "persistence/postgres/sql.hpp"

namespace sreh::persistence::pg {

inline constexpr statement upsert_candidate{
  "upsert_candidate",
  "INSERT INTO candidates (id, kind, state, created_at, doc) VALUES ($1, $2, $3, $4, $5) "
  "ON CONFLICT (id) DO UPDATE SET kind = excluded.kind, state = excluded.state, "
  "created_at = excluded.created_at, doc = excluded.doc"};
inline constexpr statement get_candidate{"get_candidate",
                                         "SELECT id, doc FROM candidates WHERE id = $1"};
inline constexpr statement list_candidates{
  "list_candidates", "SELECT id, doc FROM candidates ORDER BY created_at DESC, id DESC LIMIT $1"};

inline constexpr statement candidate_statements[] = {upsert_candidate, get_candidate,
                                                     list_candidates};

} // namespace sreh::persistence::pg
