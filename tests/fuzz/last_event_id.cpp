// Last-Event-ID and `after` values: accepted only when all decimal digits, and then the number.
#include <string>

#include "net/http/sse_format.hpp"
#include "tests/fuzz/fuzz.hpp"

void fuzz_one(std::string_view input) {
  std::string s{input};
  auto v = sreh::net::parse_last_event_id(s);
  bool digits = !s.empty();
  for (char c : s)
    digits = digits && c >= '0' && c <= '9';
  if (!v) {
    // refused: not all digits, or more than an int64 holds
    SREH_FUZZ_CHECK(!digits || s.size() >= 19);
    return;
  }
  SREH_FUZZ_CHECK(digits && *v >= 0);
  auto canonical = std::to_string(*v);
  auto trimmed = s.substr(std::min(s.find_first_not_of('0'), s.size() - 1));
  SREH_FUZZ_CHECK(canonical == trimmed);
}
