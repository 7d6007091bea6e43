// The SSE writer and reader: whatever an event's fields hold, its frame reads back (with the
// client's parser) as exactly one event with the event's seq as id, its kind and its JSON; and
// the parser gives the same events however the bytes are split.
#include <string>
#include <vector>

#include "core/base/json.hpp"
#include "core/base/sse.hpp"
#include "core/model/json_codecs.hpp"
#include "net/http/sse_format.hpp"
#include "tests/fuzz/fuzz.hpp"

namespace {

std::vector<sreh::sse_event> parse(std::string_view bytes, std::size_t chunk) {
  std::vector<sreh::sse_event> out;
  sreh::sse_parser p;
  for (std::size_t i = 0; i < bytes.size(); i += chunk)
    p.feed(bytes.substr(i, chunk), [&](const sreh::sse_event& e) {
      out.push_back(e);
      return true;
    });
  return out;
}

bool same(const std::vector<sreh::sse_event>& a, const std::vector<sreh::sse_event>& b) {
  if (a.size() != b.size())
    return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].id != b[i].id || a[i].event != b[i].event || a[i].data != b[i].data)
      return false;
  return true;
}

} // namespace

void fuzz_one(std::string_view input) {
  // The reader on arbitrary bytes: splitting never changes what it reads.
  auto whole = parse(input, input.size() + 1);
  SREH_FUZZ_CHECK(same(whole, parse(input, 1)));
  SREH_FUZZ_CHECK(same(whole, parse(input, 7)));
  // The writer: an event made of the input reads back as itself.
  sreh::event e;
  e.seq = static_cast<std::int64_t>(input.size());
  auto cut = input.find('\0');
  e.kind = std::string{input.substr(0, cut)};
  // The kernel stores only JSON objects as data; make one of the rest of the input.
  if (cut != std::string_view::npos)
    e.data = "{\"text\":" + sreh::json::quote(input.substr(cut + 1)) + "}";
  e.run_id = "run_0";
  auto frame = sreh::net::sse_frame(e);
  auto back = parse(frame, frame.size());
  SREH_FUZZ_CHECK(back.size() == 1);
  SREH_FUZZ_CHECK(back[0].id == std::to_string(e.seq));
  SREH_FUZZ_CHECK(back[0].data == sreh::json::to_json(e));
  SREH_FUZZ_CHECK(back[0].event.find_first_of("\r\n") == std::string::npos);
  if (!e.kind.empty() && e.kind.find_first_of("\r\n") == std::string::npos)
    SREH_FUZZ_CHECK(back[0].event == e.kind);
}
