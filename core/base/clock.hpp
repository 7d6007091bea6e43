#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string_view>

namespace sreh {

/// Microseconds since the Unix epoch.
using timestamp_us = std::int64_t;

/// Where time enters the system. Thread-safe.
class clock {
 public:
  virtual ~clock() = default;
  [[nodiscard]] virtual timestamp_us now_us() const = 0;
};

/// Wall-clock time.
class system_clock final : public clock {
 public:
  [[nodiscard]] timestamp_us now_us() const override;
};

/// A clock that moves only when told to; for tests.
class test_clock final : public clock {
 public:
  explicit test_clock(timestamp_us start = 1'700'000'000'000'000) : now_(start) {}
  [[nodiscard]] timestamp_us now_us() const override { return now_.load(); }
  void advance_us(timestamp_us d) { now_ += d; }
  void set_us(timestamp_us t) { now_ = t; }

 private:
  std::atomic<timestamp_us> now_;
};

/// Formats a timestamp as RFC 3339 UTC with microseconds ("2026-11-30T04:08:39.123456Z").
[[nodiscard]] std::string_view format_rfc3339(timestamp_us t, char (&buf)[32]);

/// The UTC time of a civil date and time of day (proleptic Gregorian); nullopt when the date
/// does not exist or the time is out of range (a leap second, :60, is accepted). The one
/// calendar conversion of the tree: RFC 3339 here, HTTP dates (core/llm/retry.cpp).
[[nodiscard]] std::optional<timestamp_us> utc_time(int year, int month, int day, int hour,
                                                   int minute, int second);

/// Parses an RFC 3339 timestamp ("Z" or a numeric offset; fraction truncated to microseconds).
/// The inverse of `format_rfc3339`; nullopt when malformed.
[[nodiscard]] std::optional<timestamp_us> parse_rfc3339(std::string_view s);

} // namespace sreh
