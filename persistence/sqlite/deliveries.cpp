// The notifications' outbox in the SQLite store (deliveries, migration 15). Reads use the reader
// pool; writes take the write connection between two group commits, each a short transaction.

#include <functional>

#include "persistence/sqlite/store_impl.hpp"
#include "persistence/store/paging.hpp"
#include "persistence/store/store_impl.hpp"

namespace sreh::persistence::sqlite {

namespace {

#define SREH_DELIVERY_COLUMNS                                                                      \
  "id, event_seq, event, receiver, subject, group_key, notice, state, attempts, created_at, "      \
  "next_at, done_at, last_error"

constexpr const char* sql_insert_delivery =
  "INSERT INTO deliveries (" SREH_DELIVERY_COLUMNS ") "
  "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13) ON CONFLICT (id) DO NOTHING";
constexpr const char* sql_set_offset =
  "INSERT INTO relay_offsets (name, seq, updated_at) VALUES (?1, ?2, ?3) "
  "ON CONFLICT (name) DO UPDATE SET seq = excluded.seq, updated_at = excluded.updated_at";
constexpr const char* sql_due =
  "SELECT " SREH_DELIVERY_COLUMNS " FROM deliveries WHERE state = 'pending' AND next_at <= ?1 "
  "ORDER BY event_seq, id LIMIT ?2";
constexpr const char* sql_next_at = "SELECT min(next_at) FROM deliveries WHERE state = 'pending'";
constexpr const char* sql_record =
  "UPDATE deliveries SET state = ?2, attempts = ?3, next_at = ?4, done_at = ?5, last_error = ?6 "
  "WHERE id = ?1";
constexpr const char* sql_get = "SELECT " SREH_DELIVERY_COLUMNS " FROM deliveries WHERE id = ?1";
constexpr const char* sql_list =
  "SELECT " SREH_DELIVERY_COLUMNS " FROM deliveries WHERE (?2 IS NULL OR id < ?2) "
  "AND (?3 IS NULL OR state = ?3) ORDER BY id DESC LIMIT ?1";
constexpr const char* sql_last_in_group =
  "SELECT max(created_at) FROM deliveries WHERE receiver = ?1 AND group_key = ?2 "
  "AND state <> 'grouped'";

#undef SREH_DELIVERY_COLUMNS

expected<delivery> read_delivery(const stmt_use& q) {
  delivery d;
  d.id = q.text(0);
  d.event_seq = q.i64(1);
  d.event = q.text(2);
  d.receiver = q.text(3);
  d.subject = q.text(4);
  d.group_key = q.text(5);
  d.notice = q.text(6);
  auto state = parse_delivery_state(q.text(7));
  if (!state)
    return sreh::error{errc::internal, "deliveries: unknown state '" + q.text(7) + "' of " + d.id};
  d.state = *state;
  d.attempts = q.i64(8);
  d.created_at = q.i64(9);
  d.next_at = q.i64(10);
  d.done_at = q.i64(11);
  d.last_error = q.text(12);
  return d;
}

sreh::error insert(connection& c, const delivery& d) {
  return run_cached(c, sql_insert_delivery, "enqueue delivery", [&](stmt_use& q) {
    q.bind(1, d.id).bind(2, d.event_seq).bind(3, d.event).bind(4, d.receiver).bind(5, d.subject);
    q.bind(6, d.group_key).bind(7, d.notice).bind(8, to_string(d.state)).bind(9, d.attempts);
    q.bind(10, d.created_at).bind(11, d.next_at).bind(12, d.done_at).bind(13, d.last_error);
  });
}

/// The one integer of a query's first row (NULL reads as nullopt).
expected<std::optional<std::int64_t>> scalar(connection& c, const char* sql, std::string_view op,
                                             const std::function<void(stmt_use&)>& bind) {
  auto rows = collect<std::optional<std::int64_t>>(c, sql, op, bind, [](const stmt_use& q) {
    return q.is_null(0) ? std::nullopt : std::optional<std::int64_t>{q.i64(0)};
  });
  if (!rows)
    return rows.error();
  return rows->empty() ? std::nullopt : rows->front();
}

} // namespace

sreh::error sqlite_store::enqueue_deliveries(const std::vector<delivery>& deliveries,
                                             std::string_view offset_name, std::int64_t offset) {
  check_may_block("sqlite", "enqueue_deliveries");
  std::lock_guard lk{write_mtx_};
  if (auto err = writer_->exec("BEGIN IMMEDIATE", "enqueue deliveries"))
    return err;
  sreh::error err;
  for (const auto& d : deliveries)
    if ((err = insert(*writer_, d)))
      break;
  if (!err)
    err = run_cached(*writer_, sql_set_offset, "store notify offset", [&](stmt_use& q) {
      q.bind(1, offset_name).bind(2, offset).bind(3, sreh::system_clock{}.now_us());
    });
  if (!err)
    err = writer_->exec("COMMIT", "enqueue deliveries");
  if (err)
    (void)writer_->exec("ROLLBACK", "enqueue deliveries");
  return err;
}

expected<std::vector<delivery>> sqlite_store::due_deliveries(timestamp_us now, int limit) {
  auto c = readers_.borrow();
  return collect<delivery>(
    *c, sql_due, "due deliveries",
    [&](stmt_use& q) { q.bind(1, now).bind(2, clamp_limit(limit, max_page_rows)); }, read_delivery);
}

expected<std::optional<timestamp_us>> sqlite_store::next_delivery_at() {
  auto c = readers_.borrow();
  return scalar(*c, sql_next_at, "next delivery", [](stmt_use&) {});
}

sreh::error sqlite_store::record_attempt(const delivery& d) {
  check_may_block("sqlite", "record_attempt");
  std::lock_guard lk{write_mtx_};
  return run_cached(*writer_, sql_record, "record delivery attempt", [&](stmt_use& q) {
    q.bind(1, d.id).bind(2, to_string(d.state)).bind(3, d.attempts).bind(4, d.next_at);
    q.bind(5, d.done_at).bind(6, d.last_error);
  });
}

expected<std::optional<delivery>> sqlite_store::get_delivery(std::string_view id) {
  auto c = readers_.borrow();
  return first_row(collect<delivery>(
    *c, sql_get, "get delivery", [&](stmt_use& q) { q.bind(1, id); }, read_delivery));
}

expected<delivery_page> sqlite_store::list_deliveries(const delivery_filter& f) {
  const page_window window{f.limit};
  auto c = readers_.borrow();
  auto rows = collect<delivery>(
    *c, sql_list, "list deliveries",
    [&](stmt_use& q) {
      q.bind(1, window.fetch());
      if (f.before_id.empty())
        q.bind_null(2);
      else
        q.bind(2, f.before_id);
      if (f.state)
        q.bind(3, to_string(*f.state));
      else
        q.bind_null(3);
    },
    read_delivery);
  return make_page(window, std::move(rows), &delivery_page::deliveries);
}

expected<std::optional<timestamp_us>> sqlite_store::last_in_group(std::string_view receiver,
                                                                  std::string_view group_key) {
  auto c = readers_.borrow();
  return scalar(*c, sql_last_in_group, "last delivery of a group",
                [&](stmt_use& q) { q.bind(1, receiver).bind(2, group_key); });
}

} // namespace sreh::persistence::sqlite
