#pragma once
// The event relay: publishes the committed event log to NATS JetStream, in seq order, with a
// durable offset in the store (docs/relay.md).

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "actors/hub/event_hub.hpp"
#include "actors/runtime/service_thread.hpp"
#include "actors/runtime/supervision.hpp"
#include "core/base/logger.hpp"
#include "core/model/event.hpp"
#include "net/nats/jetstream.hpp"
#include "persistence/postgres/postgres_store.hpp"
#include "persistence/store/relay_store.hpp"
#include "persistence/store/run_store.hpp"

namespace sreh::net {

struct relay_options {
  std::string name = "jetstream"; // the offset's key in the store
  std::string url;                // nats://host:port or tls://host:port
  nats_tls tls;
  std::string stream = "sreh-events";
  std::string subject_prefix = "sreh.events";
  int page_size = 1'000;                          // events read and acked per round
  std::chrono::milliseconds poll_interval{1'000}; // fallback when no hub wakes the relay
  std::chrono::milliseconds ack_wait{5'000};      // for the acks of one page
  std::chrono::milliseconds gap_poll{20};         // re-read while seq N+1 is missing
  std::chrono::milliseconds min_backoff{100};
  std::chrono::milliseconds max_backoff{5'000};
  std::chrono::milliseconds reconnect_wait{250}; // between attempts to connect to NATS
  std::chrono::seconds dedupe_window{120};       // the stream's Duplicates window
  std::chrono::seconds log_every{10};            // at most one error line per this
};

/// A snapshot of the relay's counters.
struct relay_stats {
  std::uint64_t published = 0;  // messages handed to NATS (retries included)
  std::uint64_t acked = 0;      // acks received (duplicates included)
  std::uint64_t duplicates = 0; // acks for messages JetStream already had
  std::uint64_t errors = 0;     // failed rounds (NATS or store)
  std::uint64_t gap_waits = 0;  // rounds that found seq N+2 before N+1 and waited
  std::int64_t offset = 0;      // last seq stored as delivered
  std::int64_t lag = 0;         // newest seq seen (hub or store) minus offset
  bool connected = false;
  bool active = true;     // holds the relay lock (always, without one)
  std::string last_error; // of the last failed round; "" once a round went through again
};

/// The subject of an event: `<prefix>.<kind>.<run_id>` ("node" for events of no run). Dots in
/// the kind stay (step.intent → two tokens); characters NATS gives a meaning (space, '*', '>')
/// and empty tokens become '_'.
[[nodiscard]] std::string event_subject(std::string_view prefix, const event& e);

/// Publishes the event log to JetStream from a durable offset. One thread: reads a page of
/// events after the offset, publishes them asynchronously (Nats-Msg-Id = event id), waits for
/// every ack of the page, then stores the new offset. It never stores an offset past an event
/// that was not acked and never skips a seq: when N+2 is visible but N+1 is not, it waits for
/// N+1. Woken by the event hub after each commit, with a periodic poll as a fallback. NATS or
/// store errors: one rate-limited log line, backoff, retry from the stored offset (JetStream's
/// dedupe drops what had been stored already).
///
/// Exactly one relay per event log may be active. With a `lock` (PostgreSQL: a session advisory
/// lock, see persistence::relay_lock) the relay publishes only while it holds the lock, stands
/// by otherwise (trying again every poll interval), and after taking over continues from the
/// stored offset; while active it waits for the store's commit notifications, so commits of
/// every node wake it. Without a lock the caller guarantees there is one relay (one node).
///
/// A node supervises its relay (actors::service, child "relay"): an exception that escapes the
/// relay thread ends the thread and is reported to the supervisor, which stops the relay and
/// starts it again; each start resumes from the stored offset, so the restart skips nothing, and
/// what the dead thread had published but not yet stored is deduplicated by JetStream.
///
/// Concurrency: `start`/`stop` from one owner thread; `stats` is thread-safe. `stop` waits for
/// the thread (at most about one ack slice).
class relay final : public actors::service {
 public:
  /// Publishes `events`' log from the offset kept in `offsets` (usually one store: both
  /// aggregates). `hub` may be null (then only the poll wakes the relay); `lock` may be null
  /// (one node). All must outlive the relay.
  relay(persistence::run_store& events, persistence::relay_store& offsets, actors::event_hub* hub,
        relay_options opts, persistence::relay_lock* lock = nullptr);
  ~relay() override;
  relay(const relay&) = delete;
  relay& operator=(const relay&) = delete;

  [[nodiscard]] std::string name() const override { return "relay"; }
  /// Validates the options and starts the thread, from the stored offset. NATS being away is
  /// not an error. `failed` hears of an exception that ended the thread (none: it is logged).
  [[nodiscard]] sreh::error start(actors::failure_handler failed) override;
  [[nodiscard]] sreh::error start() { return start(actors::failure_handler{}); }
  void stop() override;
  [[nodiscard]] relay_stats stats() const;

 private:
  struct counters;
  /// The relay thread: `loop`, with what escapes it reported.
  void run();
  void loop();
  /// With a lock: takes it or stands by; false while another relay is active.
  [[nodiscard]] bool lead();
  /// One round; returns false when there was nothing to publish.
  [[nodiscard]] expected<bool> round();
  /// Counts and logs `err`, then waits: `reconnect_wait` when the next attempt is a connect,
  /// else the doubled backoff.
  void failed(const sreh::error& err, bool connecting = false);
  /// Sleeps up to `d`; a hub notification ends it early when `wakeable`.
  void pause(std::chrono::milliseconds d, bool wakeable);

  persistence::run_store& events_;
  persistence::relay_store& offsets_;
  actors::event_hub* hub_;
  relay_options opts_;
  persistence::relay_lock* lock_;
  std::unique_ptr<jetstream_client> js_; // used by the relay thread only
  std::unique_ptr<counters> counters_;
  std::uint64_t hub_token_ = 0;
  actors::failure_handler on_failure_; // set before the thread starts, reset after it ends
  actors::service_thread thread_;
  // Relay thread only:
  bool stream_ready_ = false;
  bool offset_loaded_ = false;
  bool leading_ = false;
  std::int64_t offset_ = 0;
  std::chrono::milliseconds backoff_{0};
  bool recovering_ = false; // failures since the last round that went through
  log_limiter error_log_;   // one line per log_every for failed rounds
  log_limiter gap_log_;     // and for waits on a missing seq
};

} // namespace sreh::net
