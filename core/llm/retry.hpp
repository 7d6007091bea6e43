#pragma once
// When to call a model again after a failed call, and how long to wait first; and the circuit
// breaker that stops calling a provider that keeps failing. Pure: the clock and the random source
// are injected, nothing sleeps.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/base/clock.hpp"

namespace sreh::llm {

/// Response headers as received (names in any case).
using headers = std::vector<std::pair<std::string, std::string>>;

/// The value of header `name` (case-insensitive), or null.
[[nodiscard]] const std::string* find_header(const headers& h, std::string_view name);

/// Parses an HTTP date (RFC 9110: IMF-fixdate "Sun, 06 Nov 1994 08:49:37 GMT", and the obsolete
/// RFC 850 "Sunday, 06-Nov-94 08:49:37 GMT" and asctime "Sun Nov  6 08:49:37 1994" forms).
[[nodiscard]] std::optional<timestamp_us> parse_http_date(std::string_view s);

struct retry_config {
  int max_attempts = 3;                     // calls in all, the first included
  std::int64_t base_delay_ms = 500;         // the backoff of the first retry, before jitter
  std::int64_t max_delay_ms = 8'000;        // the backoff's cap
  std::int64_t max_retry_after_ms = 60'000; // a server asking for longer is not retried
};

/// How a call ended: an HTTP status, or a network error (no status: connect refused, reset,
/// timeout).
struct attempt_outcome {
  std::optional<int> http_status; // nullopt: a network error
  headers response_headers;
  int attempt = 1;      // which call this was, 1-based
  timestamp_us now = 0; // when it ended (for a Retry-After date)
};

struct retry_decision {
  bool retry = false;
  std::int64_t delay_ms = 0;
  std::string reason; // "HTTP 429, Retry-After 2 s", "HTTP 400 is not retried", …
};

/// A uniform random number in [0, 1).
using random_source = std::function<double()>;

/// Whether a status is worth another call: 408, 409, 429, 5xx (529 included).
[[nodiscard]] bool retryable_status(int status);

/// The rules, in order: success (2xx/3xx) is not retried; no attempts left is not; a server's
/// `x-should-retry: true|false` is obeyed; else 408/409/429/5xx and network errors are retried
/// and other statuses are not. The delay is the server's `retry-after-ms`, else its
/// `Retry-After` (seconds, or an HTTP date relative to `now`), when within
/// `max_retry_after_ms` (a longer one is not retried: the fallback chain does better); else
/// exponential backoff with full jitter: random() × min(max_delay, base × 2^(attempt−1)).
[[nodiscard]] retry_decision decide_retry(const retry_config& cfg, const attempt_outcome& out,
                                          const random_source& random);

struct breaker_config {
  int failure_threshold = 5;              // consecutive failures that open it
  std::int64_t cool_down_us = 30'000'000; // open this long before a probe
};

/// closed → (N consecutive failures) → open → (cool-down) → half_open: one probe call is let
/// through; its success closes the breaker, its failure opens it again for another cool-down.
/// What counts as a failure is the caller's: network errors, timeouts, 5xx and 429 — not the
/// 4xx its own request caused. Not thread-safe (one per provider, used by its owner).
class circuit_breaker {
 public:
  enum class state { closed, open, half_open };

  circuit_breaker(breaker_config cfg, const sreh::clock& clock) : cfg_(cfg), clock_(&clock) {}

  /// May a call go now? In half_open, true once (the probe) until it reports.
  [[nodiscard]] bool allow();
  void on_success();
  void on_failure();

  /// The state as of now (open turns half_open when its cool-down has passed).
  [[nodiscard]] state current() const;
  [[nodiscard]] int consecutive_failures() const { return failures_; }
  /// When an open breaker lets a probe through (0 when not open).
  [[nodiscard]] timestamp_us retry_at() const;

 private:
  breaker_config cfg_;
  const sreh::clock* clock_;
  state state_ = state::closed;
  int failures_ = 0;
  timestamp_us opened_at_ = 0;
  bool probing_ = false;
};

[[nodiscard]] const char* to_string(circuit_breaker::state s);

} // namespace sreh::llm
