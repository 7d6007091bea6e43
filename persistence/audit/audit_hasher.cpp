#include "persistence/audit/audit_hasher.hpp"

#include <fmt/format.h>
#include <openssl/evp.h>

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

audit_hasher::audit_hasher()
  : md_(EVP_MD_fetch(nullptr, "SHA256", nullptr)), ctx_(EVP_MD_CTX_new()) {}

audit_hasher::~audit_hasher() {
  EVP_MD_CTX_free(ctx_);
  EVP_MD_free(md_);
}

std::string_view audit_hasher::next(std::string_view prev_hash, std::int64_t seq, const event& e) {
  if (md_ == nullptr || ctx_ == nullptr)
    return {};
  buf_.assign(prev_hash);
  buf_ += '\n';
  append_audit_canonical(buf_, seq, e);
  unsigned char digest[32];
  unsigned int n = 0;
  if (EVP_DigestInit_ex2(ctx_, md_, nullptr) != 1 ||
      EVP_DigestUpdate(ctx_, buf_.data(), buf_.size()) != 1 ||
      EVP_DigestFinal_ex(ctx_, digest, &n) != 1 || n != sizeof digest)
    return {};
  constexpr char digits[] = "0123456789abcdef";
  for (std::size_t i = 0; i < sizeof digest; ++i) {
    hex_[2 * i] = digits[digest[i] >> 4];
    hex_[2 * i + 1] = digits[digest[i] & 0xf];
  }
  return {hex_, sizeof hex_};
}

} // namespace sreh::persistence
