#pragma once
// SHA-256, the one wrapper of OpenSSL's digest (the audit chain, token digests, webhook keys),
// and HMAC-SHA256 over it (the signature of outgoing webhooks).

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

// OpenSSL's types, declared as <openssl/types.h> does, so that only sha256.cpp includes OpenSSL.
struct evp_md_st;
struct evp_md_ctx_st;

namespace sreh {

using sha256_digest = std::array<unsigned char, 32>;

/// The value of one hex digit (either case), or -1.
[[nodiscard]] int hex_digit(char c);
/// Parses the 64 hex digits (either case) of a SHA-256 digest; nullopt otherwise.
[[nodiscard]] std::optional<sha256_digest> parse_sha256_hex(std::string_view hex);

/// Lower-case hex of bytes.
[[nodiscard]] std::string to_hex(const unsigned char* data, std::size_t n);
/// Writes the lower-case hex of `n` bytes to `out` (2 * n characters, no terminator).
void to_hex(const unsigned char* data, std::size_t n, char* out);

/// Hashes with one OpenSSL digest context, reused call after call, so hashing many texts
/// allocates nothing per text. Not thread-safe: one per user.
class sha256_hasher {
 public:
  sha256_hasher();
  ~sha256_hasher();
  sha256_hasher(const sha256_hasher&) = delete;
  sha256_hasher& operator=(const sha256_hasher&) = delete;

  /// The digest of `data` into `out`; false when OpenSSL fails (no SHA-256 provider, out of
  /// memory).
  [[nodiscard]] bool digest(std::string_view data, sha256_digest& out);

 private:
  evp_md_st* md_;
  evp_md_ctx_st* ctx_;
};

/// SHA-256 of `data` (all zeros in the unlikely case that OpenSSL fails).
[[nodiscard]] sha256_digest sha256(std::string_view data);
/// Lower-case hex of the SHA-256 of `data`.
[[nodiscard]] std::string sha256_hex(std::string_view data);
/// Lower-case hex of HMAC-SHA256(`key`, `data`) (RFC 2104; "" in the unlikely case that OpenSSL
/// fails).
[[nodiscard]] std::string hmac_sha256_hex(std::string_view key, std::string_view data);

} // namespace sreh
