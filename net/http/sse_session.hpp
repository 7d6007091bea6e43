#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/expected.hpp"
#include "core/model/event.hpp"
#include "net/http/http_message.hpp"
#include "net/http/maybe_tls_stream.hpp"
#include "net/http/server_core.hpp"

namespace sreh::net {

/// One server-sent-events stream. Loses nothing and duplicates nothing:
/// 1. subscribes to the hub first (live events queue up, bounded);
/// 2. catches up from the store after Last-Event-ID in pages, writing as it goes;
/// 3. then drains the live queue, skipping what catch-up already covered.
/// A client that falls more than `sse_queue_events` behind on live events is cut. Per-run
/// streams end (final chunk) after the run's terminal event. Idle streams get heartbeats.
///
/// Concurrency: runs on the connection's strand; the hub callback (writer thread) only touches
/// the shared `live_queue` under its mutex and posts a drain.
class sse_session : public connection, public std::enable_shared_from_this<sse_session> {
 public:
  sse_session(std::shared_ptr<server_core> core, maybe_tls_stream&& stream,
              beast::flat_buffer&& buffer, sse_spec spec, connection_slot slot,
              std::string request_id, unsigned version);
  ~sse_session() override;

  void start();
  void shutdown() override;

 private:
  struct live_queue;

  void on_header_written(beast::error_code ec);
  void catch_up();
  /// On the strand, with a page read by catch_up (`terminal_known`: the run had ended before).
  void on_page(bool terminal_known, expected<std::vector<event>> events);
  void go_live();
  void drain();
  /// Sends `e` unless catch-up or a filter covers it; `frame` is its SSE frame when made already.
  void consider(const event& e, const std::string* frame = nullptr);
  void flush();
  void on_written(beast::error_code ec);
  void arm_heartbeat();
  void watch_peer();
  void close(std::string_view why);

  std::shared_ptr<server_core> core_;
  maybe_tls_stream stream_;
  beast::flat_buffer buffer_;
  sse_spec spec_;
  connection_slot slot_;
  std::string request_id_;
  unsigned version_;
  asio::steady_timer heartbeat_;

  std::shared_ptr<live_queue> queue_;
  std::uint64_t token_ = 0;

  std::int64_t last_seq_ = 0; // highest seq covered (sent or filtered out)
  std::int64_t sent_ = 0;     // frames written
  std::string out_;           // the chunk being written
  std::string pending_;       // frames waiting for the next write
  bool writing_ = false;
  bool live_ = false;         // catch-up done
  bool catchup_more_ = false; // a full page was read: read on after this write
  bool finishing_ = false;    // terminal event seen: end after the pending frames
  bool final_sent_ = false;
  bool activity_ = false; // an event was written since the last heartbeat tick
  bool closed_ = false;
  std::array<char, 512> peek_{};
};

} // namespace sreh::net
