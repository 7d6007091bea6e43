// Subjects of relayed events.
#include "net/nats/relay.hpp"

namespace sreh::net {

namespace {

/// Appends `text` as one or more subject tokens: dots separate tokens, characters with a
/// meaning in subjects become '_', and so does an empty token.
void append_tokens(std::string& out, std::string_view text) {
  bool token_empty = true;
  for (char c : text) {
    if (c == '.') {
      if (token_empty)
        out += '_';
      out += '.';
      token_empty = true;
      continue;
    }
    const bool special = c == '*' || c == '>' || static_cast<unsigned char>(c) <= ' ' ||
                         static_cast<unsigned char>(c) == 0x7f;
    out += special ? '_' : c;
    token_empty = false;
  }
  if (token_empty)
    out += '_';
}

} // namespace

std::string event_subject(std::string_view prefix, const event& e) {
  std::string out;
  out.reserve(prefix.size() + e.kind.size() + e.run_id.size() + 2);
  out.append(prefix);
  out += '.';
  append_tokens(out, e.kind.empty() ? std::string_view{"unknown"} : std::string_view{e.kind});
  out += '.';
  append_tokens(out, e.run_id.empty() ? std::string_view{"node"} : std::string_view{e.run_id});
  return out;
}

} // namespace sreh::net
