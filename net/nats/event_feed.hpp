#pragma once
// The cluster's event feed: follows the event log that the relay publishes to JetStream and
// hands every committed event to this node (its event hub, hence its SSE streams) in seq order,
// gap-free and once, whichever node wrote it (docs/relay.md, "The event feed"). nats.c stays
// out of this header.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/base/expected.hpp"
#include "core/model/event.hpp"
#include "net/nats/jetstream.hpp"
#include "persistence/store/run_store.hpp"

namespace sreh::net {

struct event_feed_options {
  std::string url; // nats://host:port or tls://host:port
  nats_tls tls;
  std::string stream = "sreh-events";
  std::string subject_prefix = "sreh.events";
  std::string client_name = "sreh-feed"; // shown in the server's connz
  /// How long a missing seq may stay missing (a later seq has arrived) before it is read from
  /// the store; then the store is read again every gap_wait until it has it.
  std::chrono::milliseconds gap_wait{200};
  /// After this long without a message from NATS (relay down or lagging, NATS down), events
  /// that the store has and NATS has not delivered within one more `gap_wait` are delivered
  /// from the store.
  std::chrono::milliseconds relay_silence{2'000};
  /// The ordered consumer's idle heartbeat: two missed ones make nats.c re-create it.
  std::chrono::milliseconds heartbeat{1'000};
  /// Bounds each JetStream API call (subscribe, deleting the consumer at stop).
  std::chrono::milliseconds api_wait{2'000};
  int page_size = 1'000;              // events per store read
  std::chrono::seconds log_every{10}; // at most one line per kind of trouble
};

/// A snapshot of the feed's counters.
struct event_feed_stats {
  std::uint64_t received = 0;          // messages from NATS (duplicates included)
  std::uint64_t delivered = 0;         // events handed to `deliver` (from NATS or the store)
  std::uint64_t duplicates = 0;        // messages with a seq already delivered (or queued)
  std::uint64_t filled_from_store = 0; // events delivered from the store (gaps, relay silence)
  std::uint64_t resets = 0;            // ordered consumer re-created (seen on its next message)
  std::int64_t last_seq = 0;           // the last seq delivered (start_after before any)
  bool connected = false;              // connected and subscribed
};

/// Delivers the cluster's committed events to `deliver`, in seq order, gap-free, each once,
/// starting after `start_after` (normally the store's last seq when the node starts).
///
/// One worker thread owns the position: the nats.c callback only enqueues. Messages come from
/// an ordered push consumer on `<prefix>.>` that starts at the stream's last message (cheap,
/// and a gap to `start_after` is proven at once); a seq at or below the position is dropped; a
/// seq above position+1 is held until the missing ones arrive from NATS or, after gap_wait,
/// are read from the store (never skipped, never out of order). When NATS is silent for
/// relay_silence, the store is read directly so that events still flow without the relay.
///
/// Concurrency: `start`/`stop` from one owner thread; `stats` is thread-safe; `deliver` runs on
/// the worker thread, one batch at a time. `stop` waits for the worker (and for the
/// subscription's teardown: at most about api_wait when NATS is away).
class event_feed {
 public:
  /// `st` must outlive the feed.
  event_feed(persistence::run_store& st, event_feed_options o,
             std::function<void(const std::vector<event>&)> deliver);
  ~event_feed();
  event_feed(const event_feed&) = delete;
  event_feed& operator=(const event_feed&) = delete;

  /// Validates the options and starts the worker. NATS being away (or the stream not existing
  /// yet) is not an error: the feed keeps trying and meanwhile follows the store.
  [[nodiscard]] sreh::error start(std::int64_t start_after);
  void stop();
  [[nodiscard]] event_feed_stats stats() const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

} // namespace sreh::net
