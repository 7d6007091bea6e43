#include "core/base/duration.hpp"

#include <cctype>

namespace sreh {

std::optional<std::int64_t> parse_duration_s(std::string_view s) {
  std::int64_t sign = 1;
  if (!s.empty() && (s.front() == '-' || s.front() == '+')) {
    sign = s.front() == '-' ? -1 : 1;
    s.remove_prefix(1);
  }
  if (s.empty())
    return std::nullopt;
  if (s == "0")
    return 0;
  std::int64_t total = 0;
  while (!s.empty()) {
    std::int64_t n = 0;
    std::size_t digits = 0;
    while (digits < s.size() && std::isdigit(static_cast<unsigned char>(s[digits]))) {
      n = n * 10 + (s[digits] - '0');
      if (n > 10'000'000)
        return std::nullopt;
      ++digits;
    }
    if (digits == 0 || digits == s.size())
      return std::nullopt;
    std::int64_t unit = 0;
    switch (s[digits]) {
    case 's':
      unit = 1;
      break;
    case 'm':
      unit = 60;
      break;
    case 'h':
      unit = 3600;
      break;
    case 'd':
      unit = 86400;
      break;
    default:
      return std::nullopt;
    }
    total += n * unit;
    s.remove_prefix(digits + 1);
  }
  return sign * total;
}

} // namespace sreh
