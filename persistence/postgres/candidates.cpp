// The evolution gate's candidates in the PostgreSQL store (candidate_sql.hpp): the candidates of
// a batch written inside the commit's transaction, each replacing its row whole, and the reads.
#include <fmt/format.h>
#include <pqxx/pqxx>

#include "core/evolve/candidate.hpp"
#include "persistence/postgres/candidate_sql.hpp"
#include "persistence/postgres/rows.hpp"
#include "persistence/postgres/store_impl.hpp"
#include "persistence/store/store_impl.hpp"

namespace sreh::persistence::pg {

namespace {

expected<evolve::candidate> read_candidate_doc(const pqxx::row& r) {
  auto c = evolve::candidate_from_json(text(r[1]));
  if (!c)
    return sreh::error{errc::internal, fmt::format("postgres: candidates.doc of row {}: {}",
                                                   text(r[0]), c.error().message)};
  return c;
}

} // namespace

bool has_candidate_rows(const write_batch& b) {
  return !b.candidates.empty();
}

sreh::error write_candidate_rows(pqxx::work& tx, const write_batch& b) {
  for (const auto& c : b.candidates)
    tx.exec_prepared(upsert_candidate.name, c.id, std::string{evolve::to_string(c.kind)},
                     std::string{evolve::to_string(c.state)}, c.created_at, evolve::to_json(c));
  return {};
}

expected<std::optional<evolve::candidate>> postgres_store::get_candidate(std::string_view id) {
  return first_row(collect<evolve::candidate>(readers_, "get candidate", pg::get_candidate,
                                              read_candidate_doc, std::string{id}));
}

expected<std::vector<evolve::candidate>> postgres_store::list_candidates(int limit) {
  return collect<evolve::candidate>(readers_, "list candidates", pg::list_candidates,
                                    read_candidate_doc, clamp_limit(limit, max_candidate_rows));
}

} // namespace sreh::persistence::pg
