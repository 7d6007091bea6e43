#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace sreh {

/// Parses a duration like `-10m`, `2h`, `1h30m`, `45s`, `1d` (or `0`) into seconds; nullopt when
/// malformed. The one duration syntax of every file sreh reads (policies, scenarios, templates).
[[nodiscard]] std::optional<std::int64_t> parse_duration_s(std::string_view s);

} // namespace sreh
