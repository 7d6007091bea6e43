#pragma once

#include <string>
#include <string_view>

namespace sreh {

/// FNV-1a 64 of `text`, as 16 hex digits: a cheap, stable fingerprint (content versions, request
/// hashes), not a cryptographic one.
[[nodiscard]] std::string fnv1a64_hex(std::string_view text);

} // namespace sreh
