// Long-term memory in the PostgreSQL store (memory_sql.hpp): the versions of a batch written
// inside the commit's transaction, and the reads.
#include <fmt/format.h>
#include <pqxx/pqxx>

#include "core/memory/search.hpp"
#include "persistence/postgres/memory_sql.hpp"
#include "persistence/postgres/rows.hpp"
#include "persistence/postgres/store_impl.hpp"
#include "persistence/store/memory_codec.hpp"
#include "persistence/store/store_impl.hpp"

namespace sreh::persistence::pg {

namespace {

expected<memory::entry> read_memory(const pqxx::row& r) {
  auto e = memory_from_columns(
    memory_columns{text(r[0]), text(r[1]), r[2].as<std::int64_t>(), r[3].as<bool>(), text(r[4]),
                   text(r[5]), text(r[6]), text(r[7]), text(r[8]), text(r[9]), text(r[10]),
                   r[11].as<std::int64_t>(), r[12].as<std::int64_t>(), r[13].as<std::int64_t>()});
  if (!e)
    return sreh::error{errc::internal,
                       fmt::format("postgres: memories row {}: {}", text(r[0]), e.error().message)};
  return e;
}

expected<memory::candidate> read_candidate(const pqxx::row& r) {
  auto e = read_memory(r);
  if (!e)
    return e.error();
  return memory::candidate{std::move(*e), r[14].as<double>()};
}

/// `terms` as tsquery text: any of them (terms hold only letters and digits).
std::string tsquery_text(const std::vector<std::string>& terms) {
  std::string out;
  for (const auto& t : terms)
    out += (out.empty() ? "" : " | ") + t;
  return out;
}

} // namespace

bool has_memory_rows(const write_batch& b) {
  return !b.memories.empty();
}

sreh::error write_memory_rows(pqxx::work& tx, const write_batch& b) {
  for (const auto& e : b.memories) {
    const auto head = tx.exec_prepared(memory_head.name, e.id);
    const std::int64_t stored = head.empty() ? 0 : head[0][0].as<std::int64_t>();
    if (auto err = memory_version_conflict(e, stored))
      return err;
    const auto labels = memory::labels_json(e.labels);
    const auto entities = memory::entities_json(e.entities);
    const std::string kind = memory::to_string(e.kind);
    const std::string change = memory::to_string(e.made_by);
    tx.exec_prepared(insert_memory_version.name, e.id, kind, e.version, e.deleted, e.text, labels,
                     entities, e.from.run_id, e.from.work_id, e.author, change, e.restored_from,
                     e.created_at, e.updated_at);
    tx.exec_prepared(upsert_memory.name, e.id, kind, e.version, e.deleted, e.text, labels, entities,
                     e.from.run_id, e.from.work_id, e.author, change, e.restored_from, e.created_at,
                     e.updated_at, memory::tags_text(e));
  }
  return {};
}

expected<std::vector<memory::candidate>> postgres_store::search_memories(const memory::query& q) {
  const auto terms = memory::search_terms(q.text);
  const auto filter = memory::labels_json(q.filter);
  const std::string kind = q.kind ? memory::to_string(*q.kind) : "";
  const int limit = memory::candidate_limit(q);
  if (terms.empty())
    return collect<memory::candidate>(readers_, "newest memories", newest_memories, read_candidate,
                                      kind, filter, limit);
  return collect<memory::candidate>(readers_, "search memories", pg::search_memories,
                                    read_candidate, tsquery_text(terms), kind, filter, limit);
}

expected<std::optional<memory::entry>> postgres_store::get_memory(std::string_view id) {
  return first_row(
    collect<memory::entry>(readers_, "get memory", pg::get_memory, read_memory, std::string{id}));
}

expected<std::optional<memory::entry>> postgres_store::memory_version(std::string_view id,
                                                                      std::int64_t version) {
  return first_row(collect<memory::entry>(readers_, "memory version", get_memory_version,
                                          read_memory, std::string{id}, version));
}

expected<std::vector<memory::entry>> postgres_store::memory_versions(std::string_view id) {
  return collect<memory::entry>(readers_, "memory versions", list_memory_versions, read_memory,
                                std::string{id});
}

} // namespace sreh::persistence::pg
