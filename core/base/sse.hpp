#pragma once
// The one Server-Sent Events parser (the WHATWG `text/event-stream` rules, no I/O): bytes in any
// split, events out at each blank line. The CLI and tests read sreh's own streams with it
// (net/client), the model gateway's stream assemblers read the providers' (core/llm).

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace sreh {

/// One dispatched event. `data` is its `data:` lines joined with '\n'; `id` the last `id` field
/// seen (what to send as Last-Event-ID when reconnecting); `error` a non-standard `error:` field
/// (older llama.cpp servers sent mid-stream errors that way).
struct sse_event {
  std::string id;
  std::string event = "message"; // when the event names none
  std::string data;
  std::string error;
};

/// Comments are skipped; `retry` is ignored; lines end with LF, CRLF or CR.
class sse_parser {
 public:
  using callback = std::function<bool(const sse_event&)>;

  /// Feeds bytes; calls `on` for every complete event (one with data or an error). Stops early
  /// (returns false) when `on` does. Lines longer than `max_line` bytes are cut.
  bool feed(std::string_view bytes, const callback& on);
  /// Dispatches what is pending as if a blank line followed (the stream ended without one).
  bool flush(const callback& on);
  /// The last `id` field seen.
  [[nodiscard]] const std::string& last_id() const { return last_id_; }

  static constexpr std::size_t max_line = 4 << 20;

 private:
  bool line(std::string_view l, const callback& on);
  std::string partial_;
  bool skip_lf_ = false; // the last byte was '\r': a following '\n' belongs to it
  bool has_data_ = false;
  sse_event pending_;
  std::string last_id_;
};

} // namespace sreh
