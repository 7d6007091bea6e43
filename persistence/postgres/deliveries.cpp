// The notifications' outbox in the PostgreSQL store (delivery_sql.hpp, schema 15). Each write is
// one short transaction on a pooled connection, outside the group commit.
#include <fmt/format.h>
#include <pqxx/pqxx>

#include "core/base/clock.hpp"
#include "persistence/postgres/delivery_sql.hpp"
#include "persistence/postgres/rows.hpp"
#include "persistence/postgres/store_impl.hpp"
#include "persistence/store/paging.hpp"
#include "persistence/store/store_impl.hpp"

namespace sreh::persistence::pg {

namespace {

expected<delivery> read_delivery(const pqxx::row& r) {
  delivery d;
  d.id = text(r[0]);
  d.event_seq = r[1].as<std::int64_t>();
  d.event = text(r[2]);
  d.receiver = text(r[3]);
  d.subject = text(r[4]);
  d.group_key = text(r[5]);
  d.notice = text(r[6]);
  auto state = parse_delivery_state(text(r[7]));
  if (!state)
    return sreh::error{errc::internal,
                       fmt::format("postgres: deliveries.state of {}: '{}'", d.id, text(r[7]))};
  d.state = *state;
  d.attempts = r[8].as<std::int64_t>();
  d.created_at = r[9].as<std::int64_t>();
  d.next_at = r[10].as<std::int64_t>();
  d.done_at = r[11].as<std::int64_t>();
  d.last_error = text(r[12]);
  return d;
}

std::optional<std::int64_t> nullable(const pqxx::field& f) {
  return f.is_null() ? std::nullopt : std::optional<std::int64_t>{f.as<std::int64_t>()};
}

} // namespace

sreh::error postgres_store::enqueue_deliveries(const std::vector<delivery>& deliveries,
                                               std::string_view offset_name, std::int64_t offset) {
  auto c = readers_.borrow();
  auto done = c->use_retrying("enqueue deliveries", [&](pqxx::connection& conn) -> expected<bool> {
    pqxx::work tx{conn};
    for (const auto& d : deliveries)
      tx.exec_prepared(insert_delivery.name, d.id, d.event_seq, d.event, d.receiver, d.subject,
                       d.group_key, d.notice, std::string{to_string(d.state)}, d.attempts,
                       d.created_at, d.next_at, d.done_at, d.last_error);
    tx.exec_prepared(set_notify_offset.name, std::string{offset_name}, offset,
                     sreh::system_clock{}.now_us());
    tx.commit();
    return true;
  });
  return done ? sreh::error{} : done.error();
}

expected<std::vector<delivery>> postgres_store::due_deliveries(timestamp_us now, int limit) {
  return collect<delivery>(readers_, "due deliveries", pg::due_deliveries, read_delivery, now,
                           clamp_limit(limit, max_page_rows));
}

expected<std::optional<timestamp_us>> postgres_store::next_delivery_at() {
  auto rows =
    collect<std::optional<std::int64_t>>(readers_, "next delivery", pg::next_delivery_at,
                                         [](const pqxx::row& r) { return nullable(r[0]); });
  if (!rows)
    return rows.error();
  return rows->empty() ? std::nullopt : rows->front();
}

sreh::error postgres_store::record_attempt(const delivery& d) {
  auto c = readers_.borrow();
  auto done =
    c->use_retrying("record delivery attempt", [&](pqxx::connection& conn) -> expected<bool> {
      pqxx::nontransaction tx{conn};
      tx.exec_prepared(pg::record_attempt.name, d.id, std::string{to_string(d.state)}, d.attempts,
                       d.next_at, d.done_at, d.last_error);
      return true;
    });
  return done ? sreh::error{} : done.error();
}

expected<std::optional<delivery>> postgres_store::get_delivery(std::string_view id) {
  return first_row(
    collect<delivery>(readers_, "get delivery", pg::get_delivery, read_delivery, std::string{id}));
}

expected<delivery_page> postgres_store::list_deliveries(const delivery_filter& f) {
  const page_window window{f.limit};
  auto rows =
    collect<delivery>(readers_, "list deliveries", pg::list_deliveries, read_delivery,
                      window.fetch(), f.before_id, std::string{f.state ? to_string(*f.state) : ""});
  return make_page(window, std::move(rows), &delivery_page::deliveries);
}

expected<std::optional<timestamp_us>> postgres_store::last_in_group(std::string_view receiver,
                                                                    std::string_view group_key) {
  auto rows = collect<std::optional<std::int64_t>>(
    readers_, "last delivery of a group", pg::last_in_group,
    [](const pqxx::row& r) { return nullable(r[0]); }, std::string{receiver},
    std::string{group_key});
  if (!rows)
    return rows.error();
  return rows->empty() ? std::nullopt : rows->front();
}

} // namespace sreh::persistence::pg
