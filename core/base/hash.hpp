#pragma once

#include <string>
#include <string_view>

namespace sreh {

/// FNV-1a 64 of `text`, as 16 hex digits: a cheap, stable fingerprint (content versions, request
/// hashes), not a cryptographic one.
[[nodiscard]] std::string fnv1a64_hex(std::string_view text);

/// The same hash over pieces fed in order: `fnv1a64_hex(a + b)` is `fnv1a64{}.add(a).add(b).hex()`
/// (no string of the whole is built).
class fnv1a64 {
 public:
  fnv1a64& add(std::string_view text) {
    for (unsigned char c : text) {
      h_ ^= c;
      h_ *= 0x100000001b3ULL;
    }
    return *this;
  }
  [[nodiscard]] std::string hex() const;

 private:
  unsigned long long h_ = 0xcbf29ce484222325ULL;
};

} // namespace sreh
