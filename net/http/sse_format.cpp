#include "net/http/sse_format.hpp"

#include <charconv>

#include "core/base/json.hpp"
#include "core/model/json_codecs.hpp"

namespace sreh::net {

std::optional<std::int64_t> parse_last_event_id(const std::string& s) {
  // Digits only: from_chars alone would take "-0" (found by the fuzz target last_event_id).
  if (s.empty() || s.size() > 19 || s[0] < '0' || s[0] > '9')
    return std::nullopt;
  std::int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || p != s.data() + s.size() || v < 0)
    return std::nullopt;
  return v;
}

std::string sse_frame(const event& e) {
  std::string out;
  auto data = json::to_json(e);
  out.reserve(data.size() + e.kind.size() + 40);
  out += "id: ";
  out += std::to_string(e.seq);
  out += "\nevent: ";
  // Kinds are the kernel's own names; a line break in one would still split the frame.
  if (e.kind.find_first_of("\r\n") == std::string::npos) {
    out += e.kind;
  } else {
    for (char c : e.kind)
      out += c == '\r' || c == '\n' ? '_' : c;
  }
  out += "\ndata: ";
  out += data;
  out += "\n\n";
  return out;
}

} // namespace sreh::net
