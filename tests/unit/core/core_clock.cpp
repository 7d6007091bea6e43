#define CAF_SUITE core_clock
#include <caf/test/unit_test.hpp>

#include <string>

#include "core/base/clock.hpp"

using namespace sreh;

namespace {

std::string fmt_ts(timestamp_us t) {
  char buf[32];
  return std::string{format_rfc3339(t, buf)};
}

} // namespace

CAF_TEST(format) {
  CAF_CHECK_EQUAL(fmt_ts(0), std::string{"1970-01-01T00:00:00.000000Z"});
  CAF_CHECK_EQUAL(fmt_ts(1'700'000'000'123'456), std::string{"2023-11-14T22:13:20.123456Z"});
  CAF_CHECK_EQUAL(fmt_ts(951'782'400'000'001), std::string{"2000-02-29T00:00:00.000001Z"});
  CAF_CHECK_EQUAL(fmt_ts(-1), std::string{"1969-12-31T23:59:59.999999Z"});
}

CAF_TEST(parse inverts format) {
  for (timestamp_us t : {timestamp_us{0}, timestamp_us{1'700'000'000'123'456},
                         timestamp_us{951'782'400'000'001}, timestamp_us{4'102'444'799'999'999}}) {
    auto back = parse_rfc3339(fmt_ts(t));
    CAF_CHECK(back.has_value());
    if (back)
      CAF_CHECK_EQUAL(*back, t);
  }
}

CAF_TEST(parse accepts offsets and short fractions) {
  CAF_CHECK(parse_rfc3339("2023-11-14T22:13:20Z") ==
            std::optional<timestamp_us>{1'700'000'000'000'000});
  CAF_CHECK(parse_rfc3339("2023-11-14T23:13:20.5+01:00") ==
            std::optional<timestamp_us>{1'700'000'000'500'000});
  CAF_CHECK(parse_rfc3339("2023-11-14T22:13:20.1234567Z") ==
            std::optional<timestamp_us>{1'700'000'000'123'456});
}

CAF_TEST(parse rejects malformed) {
  for (const char* s : {"", "2023-11-14", "2023-11-14T22:13:20", "2023-13-14T22:13:20Z",
                        "2023-02-30T00:00:00Z", "2023-11-14T22:13:20.Z", "2023-11-14T22:13:20Zx",
                        "2023-11-14 22:13:20Z", "2023-11-14T24:00:00Z"})
    CAF_CHECK(!parse_rfc3339(s).has_value());
}

CAF_TEST(test clock moves only when told) {
  test_clock c{100};
  CAF_CHECK_EQUAL(c.now_us(), 100);
  c.advance_us(50);
  CAF_CHECK_EQUAL(c.now_us(), 150);
  system_clock sc;
  CAF_CHECK_GREATER(sc.now_us(), 1'700'000'000'000'000);
}
