#include "persistence/store/in_memory_messages.hpp"

#include <fmt/format.h>

#include "persistence/store/in_memory_contents.hpp"
#include "persistence/store/message_store.hpp"
#include "persistence/store/paging.hpp"

namespace sreh::persistence {

namespace in_memory {

sreh::error message_tables::apply(const write_batch& b) {
  for (const auto& m : b.messages) {
    key k{m.run_id, m.seq};
    if (rows_.contains(k))
      return {errc::conflict,
              fmt::format("memory: insert message {}: run {} has a message {} already", m.id,
                          m.run_id, m.seq)};
    for (const auto& [other, row] : rows_)
      if (!m.idempotency_key.empty() && other.first == m.run_id &&
          row.idempotency_key == m.idempotency_key)
        return {errc::conflict, fmt::format("memory: insert message {}: idempotency key '{}' "
                                            "is held by message {}",
                                            m.id, m.idempotency_key, row.id)};
    put(rows_, undo_, k, std::optional{m});
  }
  for (const auto& t : b.taken) {
    auto it = rows_.find(key{t.run_id, t.seq});
    if (it == rows_.end())
      return {errc::internal, fmt::format("memory: mark message {} of run {} taken: no such "
                                          "message",
                                          t.seq, t.run_id)};
    auto m = it->second;
    m.taken_step = t.step;
    put(rows_, undo_, it->first, std::optional{std::move(m)});
  }
  return {};
}

void message_tables::keep() {
  undo_.clear();
}

void message_tables::roll_back() {
  restore(rows_, undo_);
}

std::vector<conversation::message> message_tables::list(std::string_view run_id,
                                                        std::int64_t after_seq, int limit) const {
  std::vector<conversation::message> out;
  auto n = static_cast<std::size_t>(clamp_limit(limit, max_message_rows));
  for (auto it = rows_.lower_bound(key{std::string{run_id}, after_seq + 1});
       it != rows_.end() && it->first.first == run_id && out.size() < n; ++it)
    out.push_back(it->second);
  return out;
}

std::vector<conversation::message> message_tables::untaken(std::string_view run_id) const {
  std::vector<conversation::message> out;
  for (const auto& m : list(run_id, 0, max_message_rows))
    if (m.kind == conversation::message_kind::message && m.taken_step == 0)
      out.push_back(m);
  return out;
}

std::vector<std::string> message_tables::runs_with_untaken() const {
  std::vector<std::string> out;
  for (const auto& [k, m] : rows_)
    if (m.kind == conversation::message_kind::message && m.taken_step == 0 &&
        (out.empty() || out.back() != k.first))
      out.push_back(k.first);
  return out;
}

std::optional<conversation::message> message_tables::by_key(std::string_view run_id,
                                                            std::string_view k) const {
  for (auto it = rows_.lower_bound(key{std::string{run_id}, 0});
       it != rows_.end() && it->first.first == run_id; ++it)
    if (!k.empty() && it->second.idempotency_key == k)
      return it->second;
  return std::nullopt;
}

std::int64_t message_tables::last_seq(std::string_view run_id) const {
  std::int64_t seq = 0;
  for (auto it = rows_.lower_bound(key{std::string{run_id}, 0});
       it != rows_.end() && it->first.first == run_id; ++it)
    seq = it->first.second;
  return seq;
}

} // namespace in_memory

using in_memory::read_locked;

expected<std::vector<conversation::message>>
in_memory_store::list_messages(std::string_view run_id, std::int64_t after_seq, int limit) {
  return read_locked(*c_, [&] { return c_->messages.list(run_id, after_seq, limit); });
}

expected<std::vector<conversation::message>>
in_memory_store::untaken_messages(std::string_view run_id) {
  return read_locked(*c_, [&] { return c_->messages.untaken(run_id); });
}

expected<std::vector<std::string>> in_memory_store::runs_with_untaken_messages() {
  return read_locked(*c_, [&] { return c_->messages.runs_with_untaken(); });
}

expected<std::optional<conversation::message>>
in_memory_store::message_by_key(std::string_view run_id, std::string_view key) {
  return read_locked(*c_, [&] { return c_->messages.by_key(run_id, key); });
}

expected<std::int64_t> in_memory_store::last_message_seq(std::string_view run_id) {
  return read_locked(*c_, [&] { return c_->messages.last_seq(run_id); });
}

} // namespace sreh::persistence
