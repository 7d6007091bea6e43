#include "core/llm/retry.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "core/base/text.hpp"

namespace sreh::llm {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

std::optional<int> number(std::string_view s) {
  int v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || p != s.data() + s.size() || s.empty())
    return std::nullopt;
  return v;
}

std::optional<int> month(std::string_view s) {
  static constexpr std::array<std::string_view, 12> names = {
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  for (std::size_t i = 0; i < names.size(); ++i)
    if (s == names[i])
      return static_cast<int>(i) + 1;
  return std::nullopt;
}

std::optional<timestamp_us> make_time(int y, int mon, int d, std::string_view hms) {
  if (hms.size() != 8 || hms[2] != ':' || hms[5] != ':')
    return std::nullopt;
  auto h = number(hms.substr(0, 2)), mi = number(hms.substr(3, 2)), s = number(hms.substr(6, 2));
  if (!h || !mi || !s || y < 1900)
    return std::nullopt;
  return utc_time(y, mon, d, *h, *mi, *s);
}

std::vector<std::string_view> tokens(std::string_view s, std::string_view seps) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size()) {
    auto j = s.find_first_of(seps, i);
    if (j == std::string_view::npos)
      j = s.size();
    if (j > i)
      out.push_back(s.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

std::int64_t backoff_ms(const retry_config& cfg, int attempt, const random_source& random) {
  int exp = std::clamp(attempt - 1, 0, 40);
  double cap = std::min(static_cast<double>(cfg.max_delay_ms),
                        static_cast<double>(cfg.base_delay_ms) * std::ldexp(1.0, exp));
  double r = random ? random() : 1.0;
  r = std::clamp(r, 0.0, 1.0);
  return static_cast<std::int64_t>(std::floor(r * cap));
}

/// The delay the server asks for, in ms: `retry-after-ms`, else `Retry-After` as seconds (a
/// fraction accepted, as the SDKs do) or as an HTTP date. nullopt when it asks for nothing
/// readable.
std::optional<std::int64_t> server_delay_ms(const headers& h, timestamp_us now) {
  if (auto* ms = find_header(h, "retry-after-ms")) {
    char* end = nullptr;
    std::string v{trim(*ms)};
    double d = std::strtod(v.c_str(), &end);
    if (!v.empty() && end == v.c_str() + v.size() && std::isfinite(d) && d >= 0)
      return static_cast<std::int64_t>(std::ceil(d));
  }
  if (auto* ra = find_header(h, "retry-after")) {
    std::string v{trim(*ra)};
    char* end = nullptr;
    double d = std::strtod(v.c_str(), &end);
    if (!v.empty() && end == v.c_str() + v.size() && std::isfinite(d) && d >= 0)
      return static_cast<std::int64_t>(std::ceil(d * 1000));
    if (auto at = parse_http_date(v))
      return std::max<std::int64_t>(0, (*at - now + 999) / 1000);
  }
  return std::nullopt;
}

} // namespace

const std::string* find_header(const headers& h, std::string_view name) {
  for (auto& [k, v] : h)
    if (ascii_iequal(k, name))
      return &v;
  return nullptr;
}

std::optional<timestamp_us> parse_http_date(std::string_view s) {
  s = trim(s);
  auto comma = s.find(',');
  if (comma != std::string_view::npos) {
    // IMF-fixdate "06 Nov 1994 08:49:37 GMT" or RFC 850 "06-Nov-94 08:49:37 GMT".
    auto t = tokens(s.substr(comma + 1), " -");
    if (t.size() != 5 || t[4] != "GMT")
      return std::nullopt;
    auto d = number(t[0]), m = month(t[1]), y = number(t[2]);
    if (!d || !m || !y)
      return std::nullopt;
    int year = *y;
    if (t[2].size() == 2)
      year += year < 70 ? 2000 : 1900;
    else if (t[2].size() != 4)
      return std::nullopt;
    return make_time(year, *m, *d, t[3]);
  }
  // asctime "Sun Nov  6 08:49:37 1994".
  auto t = tokens(s, " ");
  if (t.size() != 5)
    return std::nullopt;
  auto m = month(t[1]), d = number(t[2]), y = number(t[4]);
  if (!m || !d || !y || t[4].size() != 4)
    return std::nullopt;
  return make_time(*y, *m, *d, t[3]);
}

bool retryable_status(int status) {
  return status == 408 || status == 409 || status == 429 || (status >= 500 && status <= 599);
}

retry_decision decide_retry(const retry_config& cfg, const attempt_outcome& out,
                            const random_source& random) {
  std::string what =
    out.http_status ? "HTTP " + std::to_string(*out.http_status) : std::string{"network error"};
  if (out.http_status && *out.http_status < 400)
    return {false, 0, what + " is not a failure"};
  if (out.attempt >= cfg.max_attempts)
    return {false, 0, what + " after " + std::to_string(out.attempt) + " attempts: giving up"};
  bool retry = !out.http_status || retryable_status(*out.http_status);
  std::string why = retry ? what + " is retried" : what + " is not retried";
  if (auto* sr = find_header(out.response_headers, "x-should-retry")) {
    auto v = trim(*sr);
    if (v == "true" || v == "false") {
      retry = v == "true";
      why = what + ", x-should-retry: " + std::string{v};
    }
  }
  if (!retry)
    return {false, 0, why};
  if (auto asked = server_delay_ms(out.response_headers, out.now)) {
    if (*asked > cfg.max_retry_after_ms)
      return {false, 0,
              why + ", but the server asks to wait " + std::to_string(*asked) +
                " ms (over the limit of " + std::to_string(cfg.max_retry_after_ms) + " ms)"};
    return {true, *asked, why + ", after the " + std::to_string(*asked) + " ms it asks for"};
  }
  auto delay = backoff_ms(cfg, out.attempt, random);
  return {true, delay, why + ", backoff " + std::to_string(delay) + " ms"};
}

// -- circuit breaker ---------------------------------------------------------------------------

const char* to_string(circuit_breaker::state s) {
  switch (s) {
  case circuit_breaker::state::closed:
    return "closed";
  case circuit_breaker::state::open:
    return "open";
  case circuit_breaker::state::half_open:
    return "half_open";
  }
  return "closed";
}

circuit_breaker::state circuit_breaker::current() const {
  if (state_ == state::open && clock_->now_us() >= opened_at_ + cfg_.cool_down_us)
    return state::half_open;
  return state_;
}

timestamp_us circuit_breaker::retry_at() const {
  return state_ == state::open ? opened_at_ + cfg_.cool_down_us : 0;
}

bool circuit_breaker::allow() {
  state_ = current();
  switch (state_) {
  case state::closed:
    return true;
  case state::open:
    return false;
  case state::half_open:
    if (probing_)
      return false;
    probing_ = true;
    return true;
  }
  return false;
}

void circuit_breaker::on_success() {
  state_ = state::closed;
  failures_ = 0;
  probing_ = false;
}

void circuit_breaker::on_failure() {
  ++failures_;
  state_ = current();
  if (state_ == state::half_open || failures_ >= cfg_.failure_threshold) {
    state_ = state::open;
    opened_at_ = clock_->now_us();
  }
  probing_ = false;
}

} // namespace sreh::llm
