#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "core/model/event.hpp"
#include "net/client/http_client.hpp"

namespace sreh::net {

/// One SSE frame for a stored event: `id: <seq>\nevent: <kind>\ndata: <json>\n\n`.
[[nodiscard]] std::string sse_frame(const event& e);

/// Parses a Last-Event-ID (or `after`) value: a non-negative decimal integer. Nullopt otherwise.
[[nodiscard]] std::optional<std::int64_t> parse_last_event_id(const std::string& s);

/// The heartbeat comment written on idle streams.
inline constexpr std::string_view sse_heartbeat = ": hb\n\n";

/// Incremental parser of the `text/event-stream` format (WHATWG HTML, "server-sent events"):
/// feed bytes as they arrive, in any split; complete events are handed to the callback.
/// Comments are skipped; `retry` is ignored; lines end with LF, CRLF or CR.
class sse_parser {
 public:
  using callback = std::function<bool(const sse_event&)>;

  /// Parses `bytes`. Returns false as soon as the callback returns false.
  bool feed(std::string_view bytes, const callback& on_event);

  /// The last `id` field seen (what to send as Last-Event-ID when reconnecting).
  [[nodiscard]] const std::string& last_id() const { return last_id_; }

 private:
  bool line(std::string_view l, const callback& on_event);

  std::string line_;
  bool skip_lf_ = false;
  std::string data_;
  bool has_data_ = false;
  std::string event_;
  std::string last_id_;
};

} // namespace sreh::net
