// Request targets and percent-encoding: any target parses or is refused; encoding then decoding
// gives back the text.
#include "net/http/url.hpp"

#include <string>

#include "tests/fuzz/fuzz.hpp"

void fuzz_one(std::string_view input) {
  (void)sreh::net::parse_target(input);
  auto decoded = sreh::net::percent_decode(input, true);
  (void)decoded;
  auto enc = sreh::net::percent_encode(input);
  auto back = sreh::net::percent_decode(enc, false);
  SREH_FUZZ_CHECK(back.has_value() && *back == input);
}
