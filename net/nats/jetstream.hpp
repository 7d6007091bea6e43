#pragma once
// A small JetStream client over nats.c (kept out of this header): one connection that
// reconnects forever, stream set-up, ordered async publishing with per-message acks and
// MsgId dedupe, an ordered push subscription (the event feed), and a reader of a whole stream
// (tests, tools).

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/expected.hpp"

namespace sreh::net {

/// TLS to the NATS server: used with a tls:// url or when any file is set (then a nats:// url
/// is upgraded to TLS too). The server's certificate must chain to `ca_file` ("" = the
/// system's CAs) and name the url's host; `cert_file` + `key_file` (PEM) are this client's
/// certificate, for a server with `verify: true`.
struct nats_tls {
  std::string ca_file;
  std::string cert_file;
  std::string key_file;

  [[nodiscard]] bool wanted(std::string_view url) const {
    return url.starts_with("tls://") || !ca_file.empty() || !cert_file.empty();
  }
};

struct jetstream_options {
  std::string url; // nats://host:port or tls://host:port
  nats_tls tls;
  std::string stream = "sreh-events";
  std::string subject_prefix = "sreh.events"; // the stream takes <prefix>.>
  std::string client_name = "sreh";           // shown in the server's connz
  std::chrono::milliseconds ack_wait{5'000};  // per message, and for a whole publish
  std::chrono::seconds dedupe_window{120};    // the stream's Duplicates window
  int max_pending = 16'384;                   // async publishes in flight
  /// Whether nats.c re-establishes a lost connection (and connects in the background when the
  /// first attempt fails). False: `connect` fails when the server is not there, and a lost
  /// connection stays closed (`connected()` false for good): the owner connects anew. A
  /// publisher that needs the stream in its order wants that: after a reconnect nats.c first
  /// re-sends what it had buffered when the connection was lost, ahead of the publisher's own
  /// retry of earlier messages, and JetStream stores them in that order.
  bool reconnect = true;
  /// Called on a nats.c thread when the connection is lost or comes back; must only signal.
  std::function<void(bool connected)> on_connection_change;
  /// Called on a nats.c thread for asynchronous errors (a subscription's missed heartbeats, a
  /// failed re-creation of an ordered consumer, a slow consumer); must only record.
  std::function<void(std::string_view what)> on_async_error;
};

/// One message to publish. `data` must stay valid for the duration of `publish`.
struct jetstream_message {
  std::string subject;
  std::string msg_id;   // the Nats-Msg-Id header: JetStream drops a repeat within the window
  std::int64_t seq = 0; // the Sreh-Seq header; also how acks find their message
  std::string_view data;
};

/// What became of one `publish`.
struct publish_outcome {
  std::size_t acked_prefix = 0; // the first n messages are all stored (acked) in the stream
  std::size_t sent = 0;         // messages handed to the connection
  std::size_t acked = 0;        // acks received for this call's messages (any order)
  std::size_t duplicates = 0;   // acks that said "already stored" (MsgId dedupe)
  sreh::error err;              // set when not every message was acked
};

/// A message read back from a stream or pushed by a subscription.
struct stream_message {
  std::uint64_t stream_seq = 0;
  std::uint64_t consumer_seq = 0; // the consumer's delivery count (1 for a new consumer's first)
  std::string subject;
  std::string msg_id;   // Nats-Msg-Id
  std::int64_t seq = 0; // Sreh-Seq (0 when absent)
  std::string data;
};

/// Where a new ordered consumer starts in the stream.
enum class deliver_from { all, last, new_only };

struct subscribe_options {
  deliver_from from = deliver_from::last;
  /// The consumer's idle heartbeat: after two missed ones nats.c re-creates the consumer.
  std::chrono::milliseconds heartbeat{1'000};
};

/// An ordered push subscription to every subject of the stream (`jetstream_client::
/// subscribe_ordered`). Destroying it unsubscribes (deleting the consumer when connected) and
/// returns once its callback has returned for the last time. Destroy it before its client.
class jetstream_subscription {
 public:
  ~jetstream_subscription();
  jetstream_subscription(const jetstream_subscription&) = delete;
  jetstream_subscription& operator=(const jetstream_subscription&) = delete;

  struct state;

 private:
  friend class jetstream_client;
  explicit jetstream_subscription(std::unique_ptr<state> s);
  std::unique_ptr<state> state_;
};

/// A JetStream connection for one stream.
///
/// Concurrency: `publish`, `ensure_stream` and `read_stream` are called by one thread at a time
/// (the relay thread); `connected` is thread-safe. nats.c runs its callbacks on its own threads;
/// they only touch this object's atomics and its mutex-guarded ack table.
class jetstream_client {
 public:
  /// Creates the connection. A server that is not reachable yet is not an error: the client
  /// keeps trying in the background (and after every loss, forever).
  [[nodiscard]] static expected<std::unique_ptr<jetstream_client>> connect(jetstream_options opts);
  ~jetstream_client();
  jetstream_client(const jetstream_client&) = delete;
  jetstream_client& operator=(const jetstream_client&) = delete;

  [[nodiscard]] bool connected() const;
  /// Increments every time the connection is lost.
  [[nodiscard]] std::uint64_t disconnects() const;

  /// Creates the stream (subjects `<prefix>.>`, file storage, the dedupe window) or updates its
  /// config when it exists.
  [[nodiscard]] sreh::error ensure_stream();

  /// Publishes `msgs` in order and waits (up to ack_wait) for their acks. Stops sending at the
  /// first failure (a lost connection included); returns early, unacknowledged, once `cancel`
  /// is set. Messages still unacknowledged when it returns are abandoned (a later ack is
  /// ignored): the caller publishes them again, and JetStream drops what was already stored.
  [[nodiscard]] publish_outcome publish(std::span<const jetstream_message> msgs,
                                        const std::atomic<bool>& cancel);

  /// Subscribes to `<prefix>.>` of the stream with an ordered push consumer (ephemeral, no
  /// acks, flow control and idle heartbeats). nats.c keeps the order: after a gap in the
  /// consumer's sequence, missed heartbeats or a reconnect it re-creates the consumer from the
  /// stream seq after the last one delivered (the new consumer's `consumer_seq` starts at 1
  /// again). `on_message` runs on a nats.c thread, one message at a time, in stream order; it
  /// must only enqueue. Fails when not connected or the stream does not exist.
  [[nodiscard]] expected<std::unique_ptr<jetstream_subscription>>
  subscribe_ordered(subscribe_options so, std::function<void(stream_message&&)> on_message);

  /// Every message of the stream from `start_seq` on (an ephemeral-like pull consumer that is
  /// deleted afterwards), in stream order. Stops after `idle` without a new message.
  [[nodiscard]] expected<std::vector<stream_message>>
  read_stream(std::uint64_t start_seq = 1,
              std::chrono::milliseconds idle = std::chrono::milliseconds{500});

  /// Deletes the stream (tests clean up with it).
  [[nodiscard]] sreh::error delete_stream();

 private:
  struct impl;
  explicit jetstream_client(std::unique_ptr<impl> p);
  std::unique_ptr<impl> impl_;
};

} // namespace sreh::net
