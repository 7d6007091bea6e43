// Runs' conversations in the SQLite store (schema 13): `messages` holds each message under
// (run_id, seq); the step that took it is set in the transaction of that step.
#include <fmt/format.h>

#include "core/conversation/message.hpp"
#include "persistence/sqlite/store_impl.hpp"
#include "persistence/store/store_impl.hpp"

namespace sreh::persistence::sqlite {

namespace {

constexpr const char* sql_insert_message =
  "INSERT INTO messages (run_id, seq, id, author, kind, text, at, idempotency_key, taken_step) "
  "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)";
constexpr const char* sql_take_message =
  "UPDATE messages SET taken_step = ?3 WHERE run_id = ?1 AND seq = ?2";
constexpr const char* columns =
  "SELECT run_id, seq, id, author, kind, text, at, idempotency_key, taken_step FROM messages ";
const std::string sql_list_messages =
  std::string{columns} + "WHERE run_id = ?1 AND seq > ?2 ORDER BY seq LIMIT ?3";
const std::string sql_untaken_messages =
  std::string{columns} + "WHERE run_id = ?1 AND taken_step = 0 AND kind = 'message' ORDER BY seq";
const std::string sql_message_by_key =
  std::string{columns} + "WHERE run_id = ?1 AND idempotency_key = ?2";
constexpr const char* sql_runs_with_untaken =
  "SELECT DISTINCT run_id FROM messages WHERE taken_step = 0 AND kind = 'message' ORDER BY run_id";
constexpr const char* sql_last_message_seq =
  "SELECT COALESCE(MAX(seq), 0) FROM messages WHERE run_id = ?1";

expected<conversation::message> read_message(const stmt_use& q) {
  conversation::message m;
  m.run_id = q.text(0);
  m.seq = q.i64(1);
  m.id = q.text(2);
  m.author = q.text(3);
  auto kind = conversation::parse_message_kind(q.text(4));
  if (!kind)
    return sreh::error{errc::internal,
                       fmt::format("sqlite: messages.kind of message {}: '{}'", m.id, q.text(4))};
  m.kind = *kind;
  m.text = q.text(5);
  m.at = q.i64(6);
  m.idempotency_key = q.text(7);
  m.taken_step = q.i64(8);
  return m;
}

} // namespace

sreh::error write_message_rows(connection& c, const write_batch& b) {
  for (const auto& m : b.messages) {
    auto bind = [&](stmt_use& q) {
      q.bind(1, m.run_id)
        .bind(2, m.seq)
        .bind(3, m.id)
        .bind(4, m.author)
        .bind(5, conversation::to_string(m.kind))
        .bind(6, m.text)
        .bind(7, m.at)
        .bind(8, m.idempotency_key)
        .bind(9, m.taken_step);
    };
    if (auto err = run_cached(c, sql_insert_message,
                              fmt::format("insert message {} of run {}", m.seq, m.run_id), bind))
      return err;
  }
  for (const auto& t : b.taken) {
    auto bind = [&](stmt_use& q) { q.bind(1, t.run_id).bind(2, t.seq).bind(3, t.step); };
    if (auto err =
          run_cached(c, sql_take_message,
                     fmt::format("mark message {} of run {} taken", t.seq, t.run_id), bind))
      return err;
  }
  return {};
}

expected<std::vector<conversation::message>>
sqlite_store::list_messages(std::string_view run_id, std::int64_t after_seq, int limit) {
  auto c = readers_.borrow();
  return collect<conversation::message>(
    *c, sql_list_messages.c_str(), "list messages",
    [&](stmt_use& q) {
      q.bind(1, run_id).bind(2, after_seq).bind(3, clamp_limit(limit, max_message_rows));
    },
    read_message);
}

expected<std::vector<conversation::message>>
sqlite_store::untaken_messages(std::string_view run_id) {
  auto c = readers_.borrow();
  return collect<conversation::message>(
    *c, sql_untaken_messages.c_str(), "untaken messages", [&](stmt_use& q) { q.bind(1, run_id); },
    read_message);
}

expected<std::vector<std::string>> sqlite_store::runs_with_untaken_messages() {
  auto c = readers_.borrow();
  return collect<std::string>(
    *c, sql_runs_with_untaken, "runs with untaken messages", [](stmt_use&) {},
    [](const stmt_use& q) { return q.text(0); });
}

expected<std::optional<conversation::message>> sqlite_store::message_by_key(std::string_view run_id,
                                                                            std::string_view key) {
  if (key.empty()) // no key: no message holds it
    return std::optional<conversation::message>{};
  auto c = readers_.borrow();
  return first_row(collect<conversation::message>(
    *c, sql_message_by_key.c_str(), "message by key",
    [&](stmt_use& q) { q.bind(1, run_id).bind(2, key); }, read_message));
}

expected<std::int64_t> sqlite_store::last_message_seq(std::string_view run_id) {
  auto c = readers_.borrow();
  auto rows = collect<std::int64_t>(
    *c, sql_last_message_seq, "last message seq", [&](stmt_use& q) { q.bind(1, run_id); },
    [](const stmt_use& q) { return q.i64(0); });
  if (!rows)
    return rows.error();
  return rows->empty() ? 0 : rows->front();
}

} // namespace sreh::persistence::sqlite
