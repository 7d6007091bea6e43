// Works, template versions and world state in the PostgreSQL store: the row mapping (a Work as
// its document; an entity's attrs and edges as JSON, see store/work_codec.hpp), their writes
// inside the commit's transaction, and the read methods.
//
// Not fenced yet: unlike run updates, a Work update is not refused when another node owns the
// Work now (Works are not claimed by survivors yet).
#include <fmt/format.h>
#include <pqxx/pqxx>

#include "persistence/postgres/rows.hpp"
#include "persistence/postgres/store_impl.hpp"
#include "persistence/postgres/work_sql.hpp"
#include "persistence/store/approval_codec.hpp"
#include "persistence/store/paging.hpp"
#include "persistence/store/store_impl.hpp"
#include "persistence/store/work_codec.hpp"

namespace sreh::persistence::pg {

namespace {

expected<works::work> read_work(const pqxx::row& r) {
  auto w = works::work_from_document(text(r[1]));
  if (!w)
    return sreh::error{errc::internal, fmt::format("postgres: works.doc of row {}: {}", text(r[0]),
                                                   w.error().message)};
  return w;
}

expected<world::entity> read_entity(const pqxx::row& r, const char* table) {
  world::entity e;
  e.id = text(r[0]);
  e.kind = text(r[1]);
  e.version = r[2].as<std::int64_t>();
  if (auto err = read_entity_columns(text(r[3]), text(r[4]), text(r[5]), e))
    return sreh::error{errc::internal, fmt::format("postgres: {}: {}", table, err.message)};
  e.changed_by = text(r[6]);
  e.observed_at = r[7].as<std::int64_t>();
  e.updated_at = r[8].as<std::int64_t>();
  return e;
}

pqxx::result write_work(pqxx::work& tx, const statement& s, const works::work& w) {
  return tx.exec_prepared(s.name, w.id, std::string{to_string(w.state)}, w.kind, w.severity,
                          w.template_name, w.template_version, w.title, compact_object(w.labels),
                          w.idempotency_key, w.node_id, w.created_at, w.updated_at,
                          works::to_document(w));
}

pqxx::result write_entity(pqxx::work& tx, const statement& s, const world::entity& e) {
  return tx.exec_prepared(s.name, e.id, e.kind, e.version, world::attrs_json(e),
                          strings_json(e.depends_on), std::string{to_string(e.source)},
                          e.changed_by, e.observed_at, e.updated_at);
}

} // namespace

// -- the write path ------------------------------------------------------------------------------

bool has_work_rows(const write_batch& b) {
  return b.create_work || b.update_work || !b.templates.empty() || !b.entities.empty();
}

std::unordered_map<std::string, std::string>
work_key_holders(pqxx::work& tx, const std::vector<write_batch>& batches) {
  array_columns keys{1};
  for (const auto& b : batches)
    if (b.create_work && !b.create_work->idempotency_key.empty())
      keys.row().text(b.create_work->idempotency_key);
  std::unordered_map<std::string, std::string> holders;
  if (keys.rows() == 0)
    return holders;
  for (const auto& row : tx.exec_prepared(works_by_keys.name, keys.finish().front()))
    holders.emplace(text(row[0]), text(row[1]));
  return holders;
}

sreh::error write_work_rows(pqxx::work& tx, const write_batch& b) {
  if (b.create_work)
    write_work(tx, insert_work, *b.create_work);
  if (b.update_work && write_work(tx, update_work, *b.update_work).affected_rows() != 1) {
    // Fenced: a survivor claimed the Work from this node (cluster_store::claim_orphan_works).
    auto owner = tx.exec_prepared(work_owner.name, b.update_work->id);
    if (!owner.empty())
      return {errc::conflict, fmt::format("work {} is owned by node '{}' now", b.update_work->id,
                                          text(owner[0][0]))};
    return {errc::internal,
            fmt::format("postgres: update work {}: no such Work", b.update_work->id)};
  }
  for (const auto& t : b.templates)
    tx.exec_prepared(insert_template.name, t.name, t.version, t.kind, t.text, t.first_seen);
  for (const auto& e : b.entities) {
    if (write_entity(tx, insert_history, e).empty())
      return {
        errc::internal,
        fmt::format("postgres: insert history of entity {}: version {} exists", e.id, e.version)};
    write_entity(tx, upsert_entity, e);
  }
  return {};
}

// -- read methods --------------------------------------------------------------------------------

expected<std::optional<works::work>> postgres_store::get_work(std::string_view id) {
  return first_row(
    collect<works::work>(readers_, "get work", pg::get_work, read_work, std::string{id}));
}

expected<work_page> postgres_store::list_works(const work_filter& f) {
  const auto& s = f.state ? list_works_state : pg::list_works;
  const std::string state = f.state ? to_string(*f.state) : "";
  const std::string label =
    f.label_key.empty() ? std::string{} : label_pattern(f.label_key, f.label_value);
  return filtered_page(f, [&](const std::string& before, int n) {
    return collect<works::work>(readers_, "list works", s, read_work, n, before, state, f.kind,
                                f.severity, label, f.text);
  });
}

expected<std::vector<works::work>> postgres_store::open_works(std::string_view node_id) {
  return collect<works::work>(readers_, "open works", pg::open_works, read_work,
                              std::string{node_id});
}

expected<std::optional<std::string>> postgres_store::work_by_idempotency_key(std::string_view key) {
  if (key.empty())
    return std::optional<std::string>{};
  return first_row(collect<std::string>(
    readers_, "work by idempotency key", work_by_key, [](const pqxx::row& r) { return text(r[0]); },
    std::string{key}));
}

expected<std::optional<works::stored_template>>
postgres_store::get_template(std::string_view name, std::string_view version) {
  return first_row(collect<works::stored_template>(
    readers_, "get template", pg::get_template,
    [](const pqxx::row& r) {
      return works::stored_template{text(r[0]), text(r[1]), text(r[2]), text(r[3]),
                                    r[4].as<std::int64_t>()};
    },
    std::string{name}, std::string{version}));
}

expected<std::vector<world::entity>> postgres_store::world_entities() {
  return collect<world::entity>(
    readers_, "world entities", pg::world_entities,
    [](const pqxx::row& r) { return read_entity(r, "world_entities"); });
}

expected<std::optional<world::entity>> postgres_store::world_entity(std::string_view id) {
  return first_row(collect<world::entity>(
    readers_, "world entity", pg::world_entity,
    [](const pqxx::row& r) { return read_entity(r, "world_entities"); }, std::string{id}));
}

expected<std::vector<world::entity>> postgres_store::entity_history(std::string_view id,
                                                                    int limit) {
  return collect<world::entity>(
    readers_, "entity history", pg::entity_history,
    [](const pqxx::row& r) { return read_entity(r, "world_history"); }, std::string{id},
    clamp_limit(limit, max_history_rows));
}

} // namespace sreh::persistence::pg
