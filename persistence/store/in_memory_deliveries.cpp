// The notifications' outbox of the in-memory store (unit tests).

#include <algorithm>

#include "persistence/store/in_memory_contents.hpp"
#include "persistence/store/paging.hpp"
#include "persistence/store/store_impl.hpp"

namespace sreh::persistence {

using in_memory::read_locked;

sreh::error in_memory_store::enqueue_deliveries(const std::vector<delivery>& deliveries,
                                                std::string_view offset_name, std::int64_t offset) {
  std::lock_guard lk{c_->mtx};
  if (c_->failure)
    return c_->failure;
  for (const auto& d : deliveries)
    c_->deliveries.try_emplace(d.id, d);
  c_->relay_offsets.insert_or_assign(std::string{offset_name}, offset);
  return {};
}

expected<std::vector<delivery>> in_memory_store::due_deliveries(timestamp_us now, int limit) {
  return read_locked(*c_, [&] {
    std::vector<delivery> out;
    for (const auto& [id, d] : c_->deliveries)
      if (d.state == delivery_state::pending && d.next_at <= now)
        out.push_back(d);
    std::sort(out.begin(), out.end(), [](const delivery& a, const delivery& b) {
      return std::tie(a.event_seq, a.id) < std::tie(b.event_seq, b.id);
    });
    out.resize(std::min(out.size(), static_cast<std::size_t>(clamp_limit(limit, max_page_rows))));
    return out;
  });
}

expected<std::optional<timestamp_us>> in_memory_store::next_delivery_at() {
  return read_locked(*c_, [&] {
    std::optional<timestamp_us> at;
    for (const auto& [id, d] : c_->deliveries)
      if (d.state == delivery_state::pending)
        at = std::min(at.value_or(d.next_at), d.next_at);
    return at;
  });
}

sreh::error in_memory_store::record_attempt(const delivery& d) {
  std::lock_guard lk{c_->mtx};
  if (c_->failure)
    return c_->failure;
  auto it = c_->deliveries.find(d.id);
  if (it == c_->deliveries.end())
    return {}; // as an UPDATE of no row
  auto& row = it->second;
  row.state = d.state;
  row.attempts = d.attempts;
  row.next_at = d.next_at;
  row.done_at = d.done_at;
  row.last_error = d.last_error;
  return {};
}

expected<std::optional<delivery>> in_memory_store::get_delivery(std::string_view id) {
  return read_locked(*c_, [&] {
    auto it = c_->deliveries.find(id);
    return it == c_->deliveries.end() ? std::nullopt : std::optional<delivery>{it->second};
  });
}

expected<delivery_page> in_memory_store::list_deliveries(const delivery_filter& f) {
  const page_window window{f.limit};
  auto rows = read_locked(*c_, [&] {
    std::vector<delivery> out;
    for (auto it = c_->deliveries.rbegin();
         it != c_->deliveries.rend() && out.size() < static_cast<std::size_t>(window.fetch()); ++it)
      if (after_cursor(it->first, f.before_id) && (!f.state || it->second.state == *f.state))
        out.push_back(it->second);
    return out;
  });
  return make_page(window, std::move(rows), &delivery_page::deliveries);
}

expected<std::optional<timestamp_us>> in_memory_store::last_in_group(std::string_view receiver,
                                                                     std::string_view group_key) {
  return read_locked(*c_, [&] {
    std::optional<timestamp_us> at;
    for (const auto& [id, d] : c_->deliveries)
      if (d.receiver == receiver && d.group_key == group_key && d.state != delivery_state::grouped)
        at = std::max(at.value_or(d.created_at), d.created_at);
    return at;
  });
}

} // namespace sreh::persistence
