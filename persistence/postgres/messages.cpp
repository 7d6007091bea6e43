// Runs' conversations in the PostgreSQL store (message_sql.hpp): the messages of a batch and the
// marks of the messages its steps took, written inside the commit's transaction, and the reads.
#include <fmt/format.h>
#include <pqxx/pqxx>

#include "core/conversation/message.hpp"
#include "persistence/postgres/message_sql.hpp"
#include "persistence/postgres/rows.hpp"
#include "persistence/postgres/store_impl.hpp"
#include "persistence/store/store_impl.hpp"

namespace sreh::persistence::pg {

namespace {

expected<conversation::message> read_message(const pqxx::row& r) {
  conversation::message m;
  m.run_id = text(r[0]);
  m.seq = r[1].as<std::int64_t>();
  m.id = text(r[2]);
  m.author = text(r[3]);
  auto kind = conversation::parse_message_kind(text(r[4]));
  if (!kind)
    return sreh::error{
      errc::internal, fmt::format("postgres: messages.kind of message {}: '{}'", m.id, text(r[4]))};
  m.kind = *kind;
  m.text = text(r[5]);
  m.at = r[6].as<std::int64_t>();
  m.idempotency_key = text(r[7]);
  m.taken_step = r[8].as<std::int64_t>();
  return m;
}

} // namespace

bool has_message_rows(const write_batch& b) {
  return !b.messages.empty() || !b.taken.empty();
}

sreh::error write_message_rows(pqxx::work& tx, const write_batch& b) {
  for (const auto& m : b.messages)
    tx.exec_prepared(insert_message.name, m.run_id, m.seq, m.id, m.author,
                     std::string{conversation::to_string(m.kind)}, m.text, m.at, m.idempotency_key,
                     m.taken_step);
  for (const auto& t : b.taken)
    tx.exec_prepared(take_message.name, t.run_id, t.seq, t.step);
  return {};
}

expected<std::vector<conversation::message>>
postgres_store::list_messages(std::string_view run_id, std::int64_t after_seq, int limit) {
  return collect<conversation::message>(readers_, "list messages", pg::list_messages, read_message,
                                        std::string{run_id}, after_seq,
                                        clamp_limit(limit, max_message_rows));
}

expected<std::vector<conversation::message>>
postgres_store::untaken_messages(std::string_view run_id) {
  return collect<conversation::message>(readers_, "untaken messages", pg::untaken_messages,
                                        read_message, std::string{run_id});
}

expected<std::vector<std::string>> postgres_store::runs_with_untaken_messages() {
  return collect<std::string>(readers_, "runs with untaken messages",
                              pg::runs_with_untaken_messages,
                              [](const pqxx::row& r) { return text(r[0]); });
}

expected<std::optional<conversation::message>>
postgres_store::message_by_key(std::string_view run_id, std::string_view key) {
  if (key.empty()) // no key: no message holds it
    return std::optional<conversation::message>{};
  return first_row(collect<conversation::message>(readers_, "message by key", pg::message_by_key,
                                                  read_message, std::string{run_id},
                                                  std::string{key}));
}

expected<std::int64_t> postgres_store::last_message_seq(std::string_view run_id) {
  auto rows = collect<std::int64_t>(
    readers_, "last message seq", pg::last_message_seq,
    [](const pqxx::row& r) { return r[0].as<std::int64_t>(); }, std::string{run_id});
  if (!rows)
    return rows.error();
  return rows->empty() ? 0 : rows->front();
}

} // namespace sreh::persistence::pg
