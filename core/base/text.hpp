#pragma once
// Small text helpers shared across components: ASCII case (header names, hosts, log search) and
// cutting UTF-8 text.

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

/// Whether `a` and `b` are equal but for ASCII case ("Content-Type" and "content-type").
[[nodiscard]] inline bool ascii_iequal(std::string_view a, std::string_view b) {
  if (a.size() != b.size())
    return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

/// The longest prefix of the UTF-8 text `s` of at most `max` bytes that does not cut a
/// character.
[[nodiscard]] inline std::string_view utf8_prefix(std::string_view s, std::size_t max) {
  if (s.size() <= max)
    return s;
  std::size_t n = max;
  // Back up over continuation bytes so that the cut falls before a lead byte.
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80)
    --n;
  return s.substr(0, n);
}

} // namespace sreh
