#include "persistence/audit/audit_hasher.hpp"

#include <fmt/format.h>

#include <iterator>

#include "persistence/audit/audit.hpp"

namespace sreh::persistence {

void append_audit_canonical(std::string& out, std::int64_t seq, const event& e) {
  fmt::format_to(std::back_inserter(out), "{}\n{}\n{}\n{}\n{}\n{}\n", seq, e.id, e.run_id,
                 e.run_seq, e.kind, e.at);
  out += e.data;
}

std::string audit_canonical(std::int64_t seq, const event& e) {
  std::string out;
  append_audit_canonical(out, seq, e);
  return out;
}

std::string audit_hash(std::string_view prev_hash, std::int64_t seq, const event& e) {
  thread_local audit_hasher h;
  return std::string{h.next(prev_hash, seq, e)};
}

// -- hasher --------------------------------------------------------------------------------------

std::string_view audit_hasher::next(std::string_view prev_hash, std::int64_t seq, const event& e) {
  buf_.assign(prev_hash);
  buf_ += '\n';
  append_audit_canonical(buf_, seq, e);
  sha256_digest digest;
  if (!sha_.digest(buf_, digest))
    return {};
  to_hex(digest.data(), digest.size(), hex_);
  return {hex_, sizeof hex_};
}

} // namespace sreh::persistence
