#pragma once

#include <array>
#include <cstdint>
#include <mutex>
#include <random>
#include <string>
#include <string_view>

#include "core/base/clock.hpp"

namespace sreh {

/// Generates time-ordered, globally unique ids: `<prefix>_` + 26 Crockford base32 characters
/// (48-bit millisecond timestamp + 80 random bits, ULID layout). Ids made by one generator sort
/// lexicographically in creation order, also within one millisecond (the random part is
/// incremented). Thread-safe.
class id_generator {
 public:
  explicit id_generator(const clock& c);
  [[nodiscard]] std::string next(std::string_view prefix);

 private:
  const clock& clock_;
  std::mutex mtx_;
  std::mt19937_64 rng_;
  std::int64_t last_ms_ = -1;
  std::array<std::uint8_t, 10> rand_{};
};

/// True when `s` has the shape `<prefix>_<26 base32 chars>`.
[[nodiscard]] bool is_valid_id(std::string_view s, std::string_view prefix);

} // namespace sreh
