#include "core/base/clock.hpp"

#include <fmt/format.h>

#include <chrono>

namespace sreh {

namespace {

constexpr std::int64_t us_per_second = 1'000'000;

/// Division rounding towards negative infinity (timestamps before 1970 stay well-formed).
std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  auto q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/// Reads exactly `n` digits at `pos`; false when any is not a digit.
bool read_digits(std::string_view s, std::size_t pos, std::size_t n, int& out) {
  if (pos + n > s.size())
    return false;
  out = 0;
  for (std::size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9')
      return false;
    out = out * 10 + (s[i] - '0');
  }
  return true;
}

} // namespace

timestamp_us system_clock::now_us() const {
  using namespace std::chrono;
  return duration_cast<microseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string_view format_rfc3339(timestamp_us t, char (&buf)[32]) {
  using namespace std::chrono;
  auto secs = floor_div(t, us_per_second);
  auto micros = t - secs * us_per_second;
  auto days = floor_div(secs, 86'400);
  auto sod = secs - days * 86'400;
  year_month_day ymd{sys_days{std::chrono::days{days}}};
  auto res = fmt::format_to_n(
    buf, sizeof(buf) - 1, "{:04d}-{:02d}-{:02d}T{:02d}:{:02d}:{:02d}.{:06d}Z",
    static_cast<int>(ymd.year()), static_cast<unsigned>(ymd.month()),
    static_cast<unsigned>(ymd.day()), sod / 3600, (sod / 60) % 60, sod % 60, micros);
  *res.out = '\0';
  return {buf, static_cast<std::size_t>(res.out - buf)};
}

std::optional<timestamp_us> utc_time(int y, int mo, int d, int h, int mi, int se) {
  using namespace std::chrono;
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h < 0 || h > 23 || mi < 0 || mi > 59 || se < 0 ||
      se > 60)
    return std::nullopt;
  year_month_day ymd{year{y}, month{static_cast<unsigned>(mo)}, day{static_cast<unsigned>(d)}};
  if (!ymd.ok())
    return std::nullopt;
  std::int64_t days = sys_days{ymd}.time_since_epoch().count();
  return (days * 86'400 + h * 3600 + mi * 60 + se) * us_per_second;
}

std::optional<timestamp_us> parse_rfc3339(std::string_view s) {
  using namespace std::chrono;
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, se = 0;
  if (!read_digits(s, 0, 4, y) || s.size() < 20 || s[4] != '-' || !read_digits(s, 5, 2, mo) ||
      s[7] != '-' || !read_digits(s, 8, 2, d) || (s[10] != 'T' && s[10] != 't') ||
      !read_digits(s, 11, 2, h) || s[13] != ':' || !read_digits(s, 14, 2, mi) || s[16] != ':' ||
      !read_digits(s, 17, 2, se))
    return std::nullopt;
  auto at = utc_time(y, mo, d, h, mi, se);
  if (!at)
    return std::nullopt;
  std::size_t pos = 19;
  std::int64_t micros = 0;
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    std::size_t digits = 0;
    for (; pos < s.size() && s[pos] >= '0' && s[pos] <= '9'; ++pos, ++digits)
      if (digits < 6)
        micros = micros * 10 + (s[pos] - '0');
    if (digits == 0)
      return std::nullopt;
    for (; digits < 6; ++digits)
      micros *= 10;
  }
  std::int64_t offset_s = 0;
  if (pos < s.size() && (s[pos] == 'Z' || s[pos] == 'z')) {
    ++pos;
  } else if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
    int oh = 0, om = 0;
    if (!read_digits(s, pos + 1, 2, oh) || pos + 3 >= s.size() || s[pos + 3] != ':' ||
        !read_digits(s, pos + 4, 2, om) || oh > 23 || om > 59)
      return std::nullopt;
    offset_s = (oh * 3600 + om * 60) * (s[pos] == '-' ? -1 : 1);
    pos += 6;
  } else {
    return std::nullopt;
  }
  if (pos != s.size())
    return std::nullopt;
  return *at - offset_s * us_per_second + micros;
}

} // namespace sreh
