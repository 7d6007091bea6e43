// The wire codecs of runs, steps, events and approvals (REST bodies, store checkpoints): any
// input decodes or is refused; what decodes encodes to text that decodes to the same encoding.
#include <string>

#include "core/base/json.hpp"
#include "core/model/json_codecs.hpp"
#include "tests/fuzz/fuzz.hpp"

namespace {

template <class Decode>
void round_trip(std::string_view input, Decode decode) {
  auto x = decode(input);
  if (!x)
    return;
  auto text = sreh::json::to_json(*x);
  auto y = decode(text);
  SREH_FUZZ_CHECK(y.has_value());
  SREH_FUZZ_CHECK(sreh::json::to_json(*y) == text);
}

} // namespace

void fuzz_one(std::string_view input) {
  if (input.empty())
    return;
  // The first byte picks the type, so one corpus exercises all four decoders.
  auto body = input.substr(1);
  switch (static_cast<unsigned char>(input[0]) % 4) {
  case 0:
    round_trip(body, sreh::json::run_from_json);
    break;
  case 1:
    round_trip(body, sreh::json::step_from_json);
    break;
  case 2:
    round_trip(body, sreh::json::event_from_json);
    break;
  default:
    round_trip(body, sreh::json::approval_from_json);
    break;
  }
}
