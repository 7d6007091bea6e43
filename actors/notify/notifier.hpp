#pragma once
// The notifier (docs/notifications.md): turns the committed event log into notifications, from a
// durable offset, through the store's outbox, and delivers each one until it is sent or
// dead-lettered. A supervised service of the node (child "notify"), like the event relay.

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "actors/hub/event_hub.hpp"
#include "actors/notify/transport.hpp"
#include "actors/runtime/service_thread.hpp"
#include "actors/runtime/supervision.hpp"
#include "core/base/clock.hpp"
#include "core/base/logger.hpp"
#include "core/notify/notice.hpp"
#include "core/notify/settings.hpp"
#include "persistence/store/approval_store.hpp"
#include "persistence/store/notify_store.hpp"
#include "persistence/store/relay_store.hpp"
#include "persistence/store/run_store.hpp"
#include "persistence/store/work_store.hpp"

namespace sreh::actors {

/// The aggregates the notifier reads and writes (usually one store: all five).
struct notifier_stores {
  persistence::run_store& runs; // the event log, the runs' goals and labels
  persistence::approval_store& approvals;
  persistence::work_store& works;
  persistence::relay_store& offsets; // the offset "notify"
  persistence::notify_store& outbox;
};

struct notifier_options {
  notify::settings settings;
  std::string link_base; // settings.link_base, or the node's own address
  int page_size = 500;   // events read per round
  int send_batch = 100;  // due deliveries sent per round
  /// The tool's risk class for an approval's notice ("" = unknown).
  std::function<std::string(std::string_view tool)> risk_of;
  /// With several nodes on one store: true while this node may notify (a lock only one node
  /// holds at a time). Null: always (one node).
  std::function<bool()> lead;
};

struct notifier_stats {
  std::uint64_t enqueued = 0;  // deliveries added to the outbox
  std::uint64_t grouped = 0;   // of them, folded into their group's earlier delivery
  std::uint64_t delivered = 0; // attempts that were answered 2xx / 250
  std::uint64_t attempts_failed = 0;
  std::uint64_t dead = 0;   // deliveries dead-lettered (state failed)
  std::uint64_t errors = 0; // rounds that failed on the store
  std::int64_t offset = 0;  // the next event seq the notifier reads
  std::string last_error;
};

/// One thread. Each round: reads the events after the offset, makes the notice of each event
/// that notifies (core/notify/notice.hpp), routes it (routing.hpp), and adds one delivery per
/// receiver to the outbox together with the new offset (one transaction: a kill -9 anywhere
/// neither loses a notification nor makes one twice); then sends the due deliveries, each
/// recorded as delivered, or pending again after a backoff, or failed after max_attempts.
/// A delivery's id is the same on every attempt, and every message carries it
/// (X-Sreh-Delivery, Idempotency-Key, PagerDuty's dedup_key, the email's Message-ID): only a
/// crash between a send and its record repeats one, and a receiver that keeps the id drops it.
///
/// The offset stored is the next seq to read: 0 means the notifier never ran on this store, and
/// then it starts at the end of the log (enabling notifications does not page for history).
///
/// Concurrency: `start`/`stop` from one owner thread; `stats` and `wake` from any thread.
class notifier final : public service {
 public:
  notifier(notifier_stores stores, notify_transport_ptr transport, event_hub* hub,
           notifier_options opts, const sreh::clock& clock);
  ~notifier() override;
  notifier(const notifier&) = delete;
  notifier& operator=(const notifier&) = delete;

  [[nodiscard]] std::string name() const override { return "notify"; }
  [[nodiscard]] sreh::error start(failure_handler failed) override;
  void stop() override;
  /// Ends the current pause (a delivery was retried by hand).
  void wake();
  [[nodiscard]] notifier_stats stats() const;

  static constexpr std::string_view offset_name = "notify";

 private:
  struct counters;
  void run();
  void loop();
  /// The stored offset into offset_; on a store it never ran on, the end of the log (stored).
  [[nodiscard]] sreh::error load_offset();
  /// Events → deliveries; false when there was nothing new.
  [[nodiscard]] expected<bool> enqueue_round();
  /// Due deliveries → receivers; false when none was due.
  [[nodiscard]] expected<bool> send_round();
  [[nodiscard]] expected<notify::subject_facts> facts_of(const event& e, std::string_view kind);
  /// The deliveries of one notice (grouped ones marked), `groups` holding this round's sends.
  [[nodiscard]] expected<std::vector<persistence::delivery>>
  deliveries_of(const notify::notice& n, std::map<std::string, timestamp_us>& groups);
  void send_one(persistence::delivery d);

  notifier_stores stores_;
  notify_transport_ptr transport_;
  event_hub* hub_;
  notifier_options opts_;
  const sreh::clock& clock_;
  std::unique_ptr<counters> counters_;
  std::uint64_t hub_token_ = 0;
  failure_handler on_failure_;
  service_thread thread_;
  // The notifier thread only:
  std::int64_t offset_ = -1; // -1: not loaded
  bool leading_ = false;     // with opts_.lead: held the lock on the last look
  std::chrono::milliseconds backoff_{0};
  log_limiter error_log_{std::chrono::seconds(10)};
};

} // namespace sreh::actors
