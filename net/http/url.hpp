#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace sreh::net {

/// Splits a request target into its decoded path and query parameters. Nullopt when the target
/// is not origin-form ("/...") or holds a bad escape.
struct split_target {
  std::string path;
  std::map<std::string, std::string> query;
};
[[nodiscard]] std::optional<split_target> parse_target(std::string_view target);

} // namespace sreh::net
