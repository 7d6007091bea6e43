#pragma once
// Small text helpers shared across components (ASCII only: header names, hosts, log search).

#include <cctype>
#include <string>
#include <string_view>

namespace sreh {

/// `s` with A-Z turned into a-z; other bytes as they are.
[[nodiscard]] inline std::string ascii_lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

} // namespace sreh
