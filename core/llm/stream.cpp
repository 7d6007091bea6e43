#include "core/llm/stream.hpp"

namespace sreh::llm {

sreh::error stream_base::feed_bytes(std::string_view bytes) {
  sreh::error first;
  sse_.feed(bytes, [&](const sse_event& m) {
    auto err = on_event(m);
    if (err && !first)
      first = std::move(err);
    return true;
  });
  return first;
}

std::string stream_base::take_text() {
  std::string out;
  out.swap(fresh_text_);
  return out;
}

sreh::error stream_base::fail(api_error e) {
  auto err = sreh::error{errc::unavailable, "model stream error: " + describe(e)};
  if (!error_)
    error_ = std::move(e);
  return err;
}

sreh::error stream_base::incomplete(bool finished) const {
  if (error_)
    return {errc::unavailable, "model stream error: " + describe(*error_)};
  if (!done_ && !finished)
    return {errc::unavailable, "model stream ended before the response was complete"};
  return {};
}

} // namespace sreh::llm
