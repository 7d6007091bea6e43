#pragma once
// The notifications' outbox (actors/notify, docs/notifications.md): one row per notice and
// receiver, made from the event log from a durable offset, each delivered until it is sent or
// dead-lettered.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/clock.hpp"
#include "core/base/expected.hpp"

namespace sreh::persistence {

/// pending → delivered | failed (dead-lettered after its attempts; `retry` makes it pending
/// again). `grouped`: folded into an earlier delivery of its group within the route's repeat
/// interval, never sent.
enum class delivery_state { pending, delivered, failed, grouped };

[[nodiscard]] const char* to_string(delivery_state s);
[[nodiscard]] std::optional<delivery_state> parse_delivery_state(std::string_view s);

struct delivery {
  std::string id; // "<event id>.<receiver>": one per event and receiver, whoever makes it
  std::int64_t event_seq = 0;
  std::string event; // the notice event (approval.requested, …)
  std::string receiver;
  std::string subject;   // the run or Work id
  std::string group_key; // "" when its route does not group
  std::string notice;    // the notice as JSON (core/notify/notice.hpp)
  delivery_state state = delivery_state::pending;
  std::int64_t attempts = 0;
  timestamp_us created_at = 0;
  timestamp_us next_at = 0; // pending: not before
  timestamp_us done_at = 0; // delivered or failed at
  std::string last_error;
};

struct delivery_filter {
  std::optional<delivery_state> state;
  std::string before_id; // cursor: ids < before_id, newest (highest event seq) first
  int limit = 50;        // 1..500
};

struct delivery_page {
  std::vector<delivery> deliveries;
  std::string next_cursor; // empty on the last page
};

/// Thread-safe. Writes are small transactions of their own, outside `commit`. Errors:
/// `unavailable` when the database is away or busy.
class notify_store {
 public:
  virtual ~notify_store() = default;

  /// Adds `deliveries` (one already stored under its id is kept as it is) and stores `offset` as
  /// the relay offset of `offset_name`, in one transaction.
  [[nodiscard]] virtual sreh::error enqueue_deliveries(const std::vector<delivery>& deliveries,
                                                       std::string_view offset_name,
                                                       std::int64_t offset) = 0;
  /// Pending deliveries due at `now` (next_at ≤ now), oldest event first, at most `limit`.
  [[nodiscard]] virtual expected<std::vector<delivery>> due_deliveries(timestamp_us now,
                                                                       int limit) = 0;
  /// The earliest next_at of a pending delivery; nullopt when none is pending.
  [[nodiscard]] virtual expected<std::optional<timestamp_us>> next_delivery_at() = 0;
  /// Records an attempt: state, attempts, next_at, done_at and last_error of `d.id`.
  [[nodiscard]] virtual sreh::error record_attempt(const delivery& d) = 0;
  [[nodiscard]] virtual expected<std::optional<delivery>> get_delivery(std::string_view id) = 0;
  [[nodiscard]] virtual expected<delivery_page> list_deliveries(const delivery_filter& f) = 0;
  /// When the last delivery of `group_key` to `receiver` that was not grouped was made; nullopt
  /// for none.
  [[nodiscard]] virtual expected<std::optional<timestamp_us>>
  last_in_group(std::string_view receiver, std::string_view group_key) = 0;
};

} // namespace sreh::persistence
