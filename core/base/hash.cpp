#include "core/base/hash.hpp"

#include <fmt/format.h>

#include <cstdint>

namespace sreh {

std::string fnv1a64_hex(std::string_view text) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return fmt::format("{:016x}", h);
}

} // namespace sreh
