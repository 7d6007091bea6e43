// Works, template versions and world state in the SQLite store: the row mapping (a Work as its
// document, an entity's attrs and edges as JSON, see work_codec.hpp), the writes of a batch and
// the read methods.
#include <fmt/format.h>

#include "persistence/sqlite/store_impl.hpp"
#include "persistence/sqlite/work_rows.hpp"
#include "persistence/store/approval_codec.hpp"
#include "persistence/store/paging.hpp"
#include "persistence/store/store_impl.hpp"
#include "persistence/store/work_codec.hpp"

namespace sreh::persistence::sqlite {

namespace {

/// Binds `v`, or NULL when it is empty (a filter that filters nothing).
void text_or_null(stmt_use& q, int i, std::string_view v) {
  if (v.empty())
    q.bind_null(i);
  else
    q.bind(i, v);
}

} // namespace

void bind_work(stmt_use& q, const works::work& w, std::string (&scratch)[2]) {
  scratch[0] = compact_object(w.labels);
  scratch[1] = works::to_document(w);
  q.bind(1, w.id)
    .bind(2, to_string(w.state))
    .bind(3, w.kind)
    .bind(4, w.severity)
    .bind(5, w.template_name)
    .bind(6, w.template_version)
    .bind(7, w.title)
    .bind(8, scratch[0])
    .bind(9, w.idempotency_key)
    .bind(10, w.node_id)
    .bind(11, w.created_at)
    .bind(12, w.updated_at)
    .bind(13, scratch[1]);
}

expected<works::work> read_work(const stmt_use& q) {
  auto w = works::work_from_document(q.text(1));
  if (!w)
    return sreh::error{
      errc::internal, fmt::format("sqlite: works.doc of row {}: {}", q.text(0), w.error().message)};
  return w;
}

void bind_entity(stmt_use& q, const world::entity& e, std::string (&scratch)[2]) {
  scratch[0] = world::attrs_json(e);
  scratch[1] = strings_json(e.depends_on);
  q.bind(1, e.id)
    .bind(2, e.kind)
    .bind(3, e.version)
    .bind(4, scratch[0])
    .bind(5, scratch[1])
    .bind(6, to_string(e.source))
    .bind(7, e.changed_by)
    .bind(8, e.observed_at)
    .bind(9, e.updated_at);
}

expected<world::entity> read_entity(const stmt_use& q, const char* table) {
  world::entity e;
  e.id = q.text(0);
  e.kind = q.text(1);
  e.version = q.i64(2);
  if (auto err = read_entity_columns(q.text(3), q.text(4), q.text(5), e))
    return sreh::error{errc::internal, fmt::format("sqlite: {}: {}", table, err.message)};
  e.changed_by = q.text(6);
  e.observed_at = q.i64(7);
  e.updated_at = q.i64(8);
  return e;
}

// -- the write path ------------------------------------------------------------------------------

expected<std::string> work_key_holder(connection& c, const std::string& key) {
  if (key.empty())
    return std::string{};
  auto* stmt = c.cached(sql_work_by_key);
  if (stmt == nullptr)
    return c.last_error("find work idempotency key");
  stmt_use q{stmt};
  q.bind(1, key);
  const int rc = q.step();
  if (rc == SQLITE_ROW)
    return q.text(0);
  if (rc != SQLITE_DONE)
    return c.last_error("find work idempotency key");
  return std::string{};
}

sreh::error write_work_rows(connection& c, const write_batch& b) {
  std::string scratch[2];
  if (b.create_work)
    if (auto err = run_cached(c, sql_insert_work, fmt::format("insert work {}", b.create_work->id),
                              [&](stmt_use& q) { bind_work(q, *b.create_work, scratch); }))
      return err;
  if (b.update_work) {
    const auto& w = *b.update_work;
    if (auto err = run_cached(c, sql_update_work, fmt::format("update work {}", w.id),
                              [&](stmt_use& q) { bind_work(q, w, scratch); }))
      return err;
    if (sqlite3_changes(c.db()) != 1)
      return {errc::internal,
              fmt::format("sqlite: update work {}: no such Work ({})", w.id, c.path())};
  }
  for (const auto& t : b.templates)
    if (auto err =
          run_cached(c, sql_insert_template,
                     fmt::format("insert template {}@{}", t.name, t.version), [&](stmt_use& q) {
                       q.bind(1, t.name)
                         .bind(2, t.version)
                         .bind(3, t.kind)
                         .bind(4, t.text)
                         .bind(5, t.first_seen);
                     }))
      return err;
  for (const auto& e : b.entities) {
    const auto what = fmt::format("entity {} version {}", e.id, e.version);
    auto bind = [&](stmt_use& q) { bind_entity(q, e, scratch); };
    if (auto err = run_cached(c, sql_insert_history, "insert history of " + what, bind))
      return err;
    if (auto err = run_cached(c, sql_upsert_entity, "upsert " + what, bind))
      return err;
  }
  return {};
}

// -- read methods --------------------------------------------------------------------------------

expected<std::optional<works::work>> sqlite_store::get_work(std::string_view id) {
  auto c = readers_.borrow();
  return first_row(collect<works::work>(
    *c, sql_get_work, "get work", [&](stmt_use& q) { q.bind(1, id); }, read_work));
}

expected<work_page> sqlite_store::list_works(const work_filter& f) {
  const char* sql = f.state ? sql_list_works_state : sql_list_works;
  const std::string label =
    f.label_key.empty() ? std::string{} : label_pattern(f.label_key, f.label_value);
  auto c = readers_.borrow();
  return filtered_page(f, [&](const std::string& before, int n) {
    return collect<works::work>(
      *c, sql, "list works",
      [&](stmt_use& q) {
        q.bind(1, n);
        text_or_null(q, 2, before);
        text_or_null(q, 3, f.state ? std::string_view{to_string(*f.state)} : std::string_view{});
        text_or_null(q, 4, f.kind);
        text_or_null(q, 5, f.severity);
        text_or_null(q, 6, label);
        text_or_null(q, 7, f.text);
      },
      read_work);
  });
}

expected<std::vector<works::work>> sqlite_store::open_works(std::string_view node_id) {
  auto c = readers_.borrow();
  return collect<works::work>(
    *c, sql_open_works, "open works", [&](stmt_use& q) { q.bind(1, node_id); }, read_work);
}

expected<std::optional<std::string>> sqlite_store::work_by_idempotency_key(std::string_view key) {
  if (key.empty())
    return std::optional<std::string>{};
  auto c = readers_.borrow();
  return first_row(collect<std::string>(
    *c, sql_work_by_key, "work by idempotency key", [&](stmt_use& q) { q.bind(1, key); },
    [](const stmt_use& q) { return q.text(0); }));
}

expected<std::optional<works::stored_template>>
sqlite_store::get_template(std::string_view name, std::string_view version) {
  auto c = readers_.borrow();
  return first_row(collect<works::stored_template>(
    *c, sql_get_template, "get template", [&](stmt_use& q) { q.bind(1, name).bind(2, version); },
    [](const stmt_use& q) {
      return works::stored_template{q.text(0), q.text(1), q.text(2), q.text(3), q.i64(4)};
    }));
}

expected<std::vector<world::entity>> sqlite_store::world_entities() {
  auto c = readers_.borrow();
  return collect<world::entity>(
    *c, sql_world_entities, "world entities", [](stmt_use&) {},
    [](const stmt_use& q) { return read_entity(q, "world_entities"); });
}

expected<std::optional<world::entity>> sqlite_store::world_entity(std::string_view id) {
  auto c = readers_.borrow();
  return first_row(collect<world::entity>(
    *c, sql_world_entity, "world entity", [&](stmt_use& q) { q.bind(1, id); },
    [](const stmt_use& q) { return read_entity(q, "world_entities"); }));
}

expected<std::vector<world::entity>> sqlite_store::entity_history(std::string_view id, int limit) {
  auto c = readers_.borrow();
  return collect<world::entity>(
    *c, sql_entity_history, "entity history",
    [&](stmt_use& q) { q.bind(1, id).bind(2, clamp_limit(limit, max_history_rows)); },
    [](const stmt_use& q) { return read_entity(q, "world_history"); });
}

} // namespace sreh::persistence::sqlite
