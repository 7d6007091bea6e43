#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/base/sha256.hpp"
#include "core/model/event.hpp"

namespace sreh::persistence {

/// Computes audit-chain hashes (see audit.hpp) with one SHA-256 context and reused buffers, so
/// hashing a long log allocates nothing per entry. Not thread-safe: one per user.
class audit_hasher {
 public:
  /// The hash of `e` at `seq` after `prev_hash` (64 lower-case hex digits), valid until the
  /// next call; empty when OpenSSL fails (no SHA-256 provider, out of memory).
  [[nodiscard]] std::string_view next(std::string_view prev_hash, std::int64_t seq, const event& e);

 private:
  sha256_hasher sha_;
  std::string buf_;
  char hex_[64];
};

} // namespace sreh::persistence
