#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace sreh::net {

/// Decodes %XX escapes (and '+' as a space when `plus_is_space`). Nullopt on a bad escape.
[[nodiscard]] std::optional<std::string> percent_decode(std::string_view s, bool plus_is_space);

/// Encodes everything but unreserved characters (RFC 3986) as %XX.
[[nodiscard]] std::string percent_encode(std::string_view s);

/// Splits a request target into its decoded path and query parameters. Nullopt when the target
/// is not origin-form ("/...") or holds a bad escape.
struct split_target {
  std::string path;
  std::map<std::string, std::string> query;
};
[[nodiscard]] std::optional<split_target> parse_target(std::string_view target);

} // namespace sreh::net
