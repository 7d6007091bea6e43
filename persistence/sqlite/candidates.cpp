// The evolution gate's candidates in the SQLite store (schema 12): `candidates` holds each
// candidate's current state as its document (`doc`: evolve::to_json), with the columns that the
// reads order on. A write replaces the row whole.
#include <fmt/format.h>

#include "core/evolve/candidate.hpp"
#include "persistence/sqlite/store_impl.hpp"
#include "persistence/store/store_impl.hpp"

namespace sreh::persistence::sqlite {

namespace {

constexpr const char* sql_upsert_candidate =
  "INSERT INTO candidates (id, kind, state, created_at, doc) VALUES (?1, ?2, ?3, ?4, ?5) "
  "ON CONFLICT (id) DO UPDATE SET kind = excluded.kind, state = excluded.state, "
  "created_at = excluded.created_at, doc = excluded.doc";
constexpr const char* sql_get_candidate = "SELECT id, doc FROM candidates WHERE id = ?1";
constexpr const char* sql_list_candidates =
  "SELECT id, doc FROM candidates ORDER BY created_at DESC, id DESC LIMIT ?1";

expected<evolve::candidate> read_candidate_doc(const stmt_use& q) {
  auto c = evolve::candidate_from_json(q.text(1));
  if (!c)
    return sreh::error{errc::internal, fmt::format("sqlite: candidates.doc of row {}: {}",
                                                   q.text(0), c.error().message)};
  return c;
}

} // namespace

sreh::error write_candidate_rows(connection& c, const write_batch& b) {
  for (const auto& cand : b.candidates) {
    const auto doc = evolve::to_json(cand);
    auto bind = [&](stmt_use& q) {
      q.bind(1, cand.id)
        .bind(2, evolve::to_string(cand.kind))
        .bind(3, evolve::to_string(cand.state))
        .bind(4, cand.created_at)
        .bind(5, doc);
    };
    if (auto err =
          run_cached(c, sql_upsert_candidate, fmt::format("upsert candidate {}", cand.id), bind))
      return err;
  }
  return {};
}

expected<std::optional<evolve::candidate>> sqlite_store::get_candidate(std::string_view id) {
  auto c = readers_.borrow();
  return first_row(collect<evolve::candidate>(
    *c, sql_get_candidate, "get candidate", [&](stmt_use& q) { q.bind(1, id); },
    read_candidate_doc));
}

expected<std::vector<evolve::candidate>> sqlite_store::list_candidates(int limit) {
  auto c = readers_.borrow();
  return collect<evolve::candidate>(
    *c, sql_list_candidates, "list candidates",
    [&](stmt_use& q) { q.bind(1, clamp_limit(limit, max_candidate_rows)); }, read_candidate_doc);
}

} // namespace sreh::persistence::sqlite
