#pragma once
// What both stream assemblers (OpenAI chat-completion chunks, Anthropic Messages events) share:
// the SSE decoder, the text that arrived since it was last taken, the error the stream
// reported, and the check that a stream ended complete. Pure.

#include <optional>
#include <string>
#include <string_view>

#include "core/base/expected.hpp"
#include "core/base/sse.hpp"
#include "core/llm/types.hpp"

namespace sreh::llm {

class stream_base {
 public:
  virtual ~stream_base() = default;
  /// Raw response bytes, split anywhere (an SSE decoder inside); the first error of the events
  /// they complete.
  sreh::error feed_bytes(std::string_view bytes);
  /// The text that arrived since the last call (for `model.delta` events).
  [[nodiscard]] std::string take_text();
  /// The end marker was seen (`[DONE]`, message_stop).
  [[nodiscard]] bool done() const { return done_; }
  /// The error the stream reported, if it did.
  [[nodiscard]] const std::optional<api_error>& stream_error() const { return error_; }

 protected:
  /// One decoded SSE event.
  virtual sreh::error on_event(const sse_event& e) = 0;
  /// Records the stream's first error; the error to return.
  sreh::error fail(api_error e);
  /// Why the stream is not a whole response: it reported an error, or it ended before its end
  /// marker and before `finished` (a stop or finish reason); nothing when it is whole.
  [[nodiscard]] sreh::error incomplete(bool finished) const;

  chat_response resp_;
  std::string fresh_text_;
  std::optional<api_error> error_;
  bool done_ = false;

 private:
  sse_parser sse_;
};

} // namespace sreh::llm
