#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "core/model/event.hpp"

namespace sreh::net {

/// One SSE frame for a stored event: `id: <seq>\nevent: <kind>\ndata: <json>\n\n`.
[[nodiscard]] std::string sse_frame(const event& e);

/// Parses a Last-Event-ID (or `after`) value: a non-negative decimal integer. Nullopt otherwise.
[[nodiscard]] std::optional<std::int64_t> parse_last_event_id(const std::string& s);

/// The heartbeat comment written on idle streams.
inline constexpr std::string_view sse_heartbeat = ": hb\n\n";

} // namespace sreh::net
