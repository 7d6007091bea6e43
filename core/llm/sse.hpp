#pragma once
// A Server-Sent Events decoder for model streams (the WHATWG event-stream rules, no I/O): bytes
// in any split, events out at each blank line. Both stream assemblers sit behind it.

#include <functional>
#include <string>
#include <string_view>

namespace sreh::llm {

/// One dispatched event. `data` is the `data:` lines joined with '\n'. `error` holds a
/// non-standard `error:` field (older llama.cpp servers sent mid-stream errors that way).
struct sse_message {
  std::string event;
  std::string data;
  std::string error;
};

class sse_decoder {
 public:
  /// Feeds bytes; calls `on` for every complete event. Stops early (returns false) when `on`
  /// does. Lines longer than `max_line` bytes are cut (the rest of the line dropped).
  bool feed(std::string_view bytes, const std::function<bool(const sse_message&)>& on);

  /// Dispatches what is pending as if a blank line followed (the stream ended without one).
  bool flush(const std::function<bool(const sse_message&)>& on);

  static constexpr std::size_t max_line = 4 << 20;

 private:
  bool line(std::string_view l, const std::function<bool(const sse_message&)>& on);
  std::string partial_;
  bool skip_lf_ = false; // the last byte was '\r': a following '\n' belongs to it
  bool has_data_ = false;
  sse_message pending_;
};

} // namespace sreh::llm
