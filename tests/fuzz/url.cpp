// Request targets and percent-encoding: any target parses or is refused; encoding then decoding
// gives back the text.
#include "net/http/url.hpp"

#include <string>

#include "core/base/http_url.hpp"
#include "tests/fuzz/fuzz.hpp"

void fuzz_one(std::string_view input) {
  (void)sreh::net::parse_target(input);
  auto decoded = sreh::percent_decode(input, true);
  (void)decoded;
  auto enc = sreh::percent_encode(input);
  auto back = sreh::percent_decode(enc, false);
  SREH_FUZZ_CHECK(back.has_value() && *back == input);
}
