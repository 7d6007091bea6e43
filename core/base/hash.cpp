#include "core/base/hash.hpp"

#include <fmt/format.h>

#include <cstdint>

namespace sreh {

std::string fnv1a64_hex(std::string_view text) {
  return fnv1a64{}.add(text).hex();
}

std::string fnv1a64::hex() const {
  return fmt::format("{:016x}", h_);
}

} // namespace sreh
