#define CAF_SUITE llm_retry
#include <caf/test/unit_test.hpp>

// The rules follow the official SDK's retry logic (anthropics/anthropic-sdk-python v0.121.0,
// _base_client.py `_should_retry` / `_parse_retry_after_header`, _constants.py: 0.5 s initial,
// 8 s cap), with full jitter instead of the SDK's ±25 %.

#include <string>

#include "core/base/clock.hpp"
#include "core/llm/retry.hpp"

using namespace sreh;
using namespace sreh::llm;

namespace {

attempt_outcome status(int s, headers h = {}, int attempt = 1) {
  attempt_outcome o;
  o.http_status = s;
  o.response_headers = std::move(h);
  o.attempt = attempt;
  o.now = 784'111'777'000'000; // Sun, 06 Nov 1994 08:49:37 GMT
  return o;
}

random_source fixed(double v) {
  return [v] { return v; };
}

} // namespace

CAF_TEST(which statuses are retried) {
  retry_config cfg;
  for (int s : {408, 409, 429, 500, 502, 503, 504, 529})
    CAF_CHECK_EQUAL(decide_retry(cfg, status(s), fixed(0.5)).retry ? s : 0, s);
  for (int s : {400, 401, 403, 404, 413, 422, 200, 204})
    CAF_CHECK_EQUAL(decide_retry(cfg, status(s), fixed(0.5)).retry ? s : 0, 0);
  attempt_outcome net;
  net.attempt = 1;
  auto d = decide_retry(cfg, net, fixed(0.5));
  CAF_CHECK(d.retry);
  CAF_CHECK_EQUAL(d.reason, "network error is retried, backoff 250 ms");
  CAF_CHECK_EQUAL(decide_retry(cfg, status(400), fixed(0.5)).reason, "HTTP 400 is not retried");
}

CAF_TEST(attempts run out) {
  retry_config cfg;
  cfg.max_attempts = 3;
  CAF_CHECK(decide_retry(cfg, status(503, {}, 2), fixed(0.5)).retry);
  auto last = decide_retry(cfg, status(503, {}, 3), fixed(0.5));
  CAF_CHECK(!last.retry);
  CAF_CHECK_EQUAL(last.reason, "HTTP 503 after 3 attempts: giving up");
}

CAF_TEST(x should retry overrides the status) {
  retry_config cfg;
  CAF_CHECK(!decide_retry(cfg, status(503, {{"X-Should-Retry", "false"}}), fixed(0.5)).retry);
  auto d = decide_retry(cfg, status(400, {{"x-should-retry", "true"}}), fixed(0.5));
  CAF_CHECK(d.retry);
  CAF_CHECK_EQUAL(d.reason, "HTTP 400, x-should-retry: true, backoff 250 ms");
  // Anything but true/false is no opinion.
  CAF_CHECK(!decide_retry(cfg, status(400, {{"x-should-retry", "maybe"}}), fixed(0.5)).retry);
}

CAF_TEST(the delay of the server wins when it names one) {
  retry_config cfg;
  auto ms =
    decide_retry(cfg, status(429, {{"retry-after-ms", "1500"}, {"retry-after", "9"}}), fixed(0.5));
  CAF_CHECK(ms.retry);
  CAF_CHECK_EQUAL(ms.delay_ms, 1500);
  CAF_CHECK_EQUAL(decide_retry(cfg, status(429, {{"Retry-After", "2"}}), fixed(0.5)).delay_ms,
                  2000);
  CAF_CHECK_EQUAL(decide_retry(cfg, status(429, {{"Retry-After", "0.25"}}), fixed(0.5)).delay_ms,
                  250);
  // An HTTP date, relative to now (08:49:37).
  auto date =
    decide_retry(cfg, status(503, {{"Retry-After", "Sun, 06 Nov 1994 08:49:40 GMT"}}), fixed(0.5));
  CAF_CHECK_EQUAL(date.delay_ms, 3000);
  auto past =
    decide_retry(cfg, status(503, {{"Retry-After", "Sun, 06 Nov 1994 08:00:00 GMT"}}), fixed(0.5));
  CAF_CHECK(past.retry);
  CAF_CHECK_EQUAL(past.delay_ms, 0);
  // Unreadable: the backoff.
  CAF_CHECK_EQUAL(decide_retry(cfg, status(503, {{"Retry-After", "soon"}}), fixed(0.5)).delay_ms,
                  250);
  // Longer than the limit: not retried.
  auto too_long = decide_retry(cfg, status(429, {{"retry-after", "3600"}}), fixed(0.5));
  CAF_CHECK(!too_long.retry);
  CAF_CHECK_EQUAL(too_long.reason, "HTTP 429 is retried, but the server asks to wait 3600000 ms "
                                   "(over the limit of 60000 ms)");
  // A delay on a status that is not retried changes nothing.
  CAF_CHECK(!decide_retry(cfg, status(400, {{"retry-after", "1"}}), fixed(0.5)).retry);
}

CAF_TEST(backoff is exponential full jitter under a cap) {
  retry_config cfg; // 500 ms base, 8 s cap
  CAF_CHECK_EQUAL(decide_retry(cfg, status(500, {}, 1), fixed(0.999999)).delay_ms, 499);
  cfg.max_attempts = 100;
  CAF_CHECK_EQUAL(decide_retry(cfg, status(500, {}, 2), fixed(0.5)).delay_ms, 500);
  CAF_CHECK_EQUAL(decide_retry(cfg, status(500, {}, 4), fixed(0.5)).delay_ms, 2000);
  CAF_CHECK_EQUAL(decide_retry(cfg, status(500, {}, 5), fixed(0.5)).delay_ms, 4000);
  CAF_CHECK_EQUAL(decide_retry(cfg, status(500, {}, 6), fixed(0.5)).delay_ms, 4000); // cap 8 s
  CAF_CHECK_EQUAL(decide_retry(cfg, status(500, {}, 90), fixed(1.0)).delay_ms, 8000);
  CAF_CHECK_EQUAL(decide_retry(cfg, status(500, {}, 3), fixed(0.0)).delay_ms, 0);
  // An out-of-range random source is clamped.
  CAF_CHECK_EQUAL(decide_retry(cfg, status(500, {}, 1), fixed(7.0)).delay_ms, 500);
}

CAF_TEST(http dates in the three forms) {
  timestamp_us want = 784'111'777'000'000;
  CAF_CHECK_EQUAL(parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT").value_or(0), want);
  CAF_CHECK_EQUAL(parse_http_date("Sunday, 06-Nov-94 08:49:37 GMT").value_or(0), want);
  CAF_CHECK_EQUAL(parse_http_date("Sun Nov  6 08:49:37 1994").value_or(0), want);
  CAF_CHECK_EQUAL(parse_http_date("Thu, 01 Jan 1970 00:00:00 GMT").value_or(-1), 0);
  CAF_CHECK_EQUAL(parse_http_date("Tue, 01 Dec 2026 18:48:06 GMT").value_or(0),
                  1'796'150'886'000'000);
  for (auto bad : {"", "Sun, 06 Nov 1994 08:49:37 PST", "Sun, 06 Foo 1994 08:49:37 GMT",
                   "Sun, 06 Nov 1994 25:49:37 GMT", "Sun, 06 Nov 1994 08:49 GMT", "1994-11-06",
                   "Sun, 06 Nov 94444 08:49:37 GMT"})
    CAF_CHECK_EQUAL(parse_http_date(bad).has_value() ? std::string{bad} : "", "");
}

CAF_TEST(the breaker opens probes and closes) {
  test_clock clock;
  circuit_breaker b({3, 10'000'000}, clock);
  CAF_CHECK(b.current() == circuit_breaker::state::closed);
  CAF_CHECK(b.allow());
  b.on_failure();
  b.on_failure();
  b.on_success(); // a success in between resets the count
  b.on_failure();
  b.on_failure();
  CAF_CHECK(b.current() == circuit_breaker::state::closed);
  CAF_CHECK_EQUAL(b.consecutive_failures(), 2);
  b.on_failure();
  CAF_CHECK(b.current() == circuit_breaker::state::open);
  CAF_CHECK(!b.allow());
  CAF_CHECK_EQUAL(b.retry_at(), clock.now_us() + 10'000'000);
  clock.advance_us(9'999'999);
  CAF_CHECK(!b.allow());
  clock.advance_us(1);
  CAF_CHECK(b.current() == circuit_breaker::state::half_open);
  CAF_CHECK(b.allow());  // the probe
  CAF_CHECK(!b.allow()); // one at a time
  b.on_success();
  CAF_CHECK(b.current() == circuit_breaker::state::closed);
  CAF_CHECK(b.allow());
  CAF_CHECK_EQUAL(to_string(b.current()), std::string{"closed"});
}

CAF_TEST(a failed probe reopens for another cool down) {
  test_clock clock;
  circuit_breaker b({1, 5'000'000}, clock);
  b.on_failure();
  CAF_CHECK(!b.allow());
  clock.advance_us(5'000'000);
  CAF_CHECK(b.allow());
  b.on_failure();
  CAF_CHECK(b.current() == circuit_breaker::state::open);
  CAF_CHECK(!b.allow());
  clock.advance_us(4'999'999);
  CAF_CHECK(!b.allow());
  clock.advance_us(1);
  CAF_CHECK(b.allow());
  CAF_CHECK_EQUAL(to_string(b.current()), std::string{"half_open"});
}
