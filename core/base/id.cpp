#include "core/base/id.hpp"

#include <algorithm>

namespace sreh {

namespace {

constexpr std::string_view crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
constexpr std::size_t ulid_chars = 26;
constexpr std::int64_t max_ms = (std::int64_t{1} << 48) - 1;

/// Adds one to a big-endian byte string; false when it wrapped around to zero.
bool increment(std::array<std::uint8_t, 10>& bytes) {
  for (auto i = bytes.size(); i-- > 0;) {
    if (++bytes[i] != 0)
      return true;
  }
  return false;
}

} // namespace

id_generator::id_generator(const clock& c) : clock_(c) {
  std::random_device rd;
  std::seed_seq seq{rd(), rd(), rd(), rd(), rd(), rd(), rd(), rd()};
  rng_.seed(seq);
}

std::string id_generator::next(std::string_view prefix) {
  std::lock_guard<std::mutex> guard{mtx_};
  auto now = clock_.now_us();
  auto ms = std::clamp<std::int64_t>(now < 0 ? 0 : now / 1000, 0, max_ms);
  if (ms <= last_ms_) {
    // Same millisecond (or the clock went back): keep the order by incrementing the random
    // part; if that wraps, borrow the next millisecond.
    ms = last_ms_;
    if (!increment(rand_))
      ms = last_ms_ = std::min(last_ms_ + 1, max_ms);
  } else {
    last_ms_ = ms;
    for (std::size_t i = 0; i < rand_.size(); i += 8) {
      auto r = rng_();
      for (std::size_t j = i; j < std::min(i + 8, rand_.size()); ++j, r >>= 8)
        rand_[j] = static_cast<std::uint8_t>(r);
    }
    // Leave headroom so that increments within one millisecond rarely wrap.
    rand_[0] &= 0x7f;
  }
  unsigned __int128 v = static_cast<std::uint64_t>(ms);
  for (auto b : rand_)
    v = (v << 8) | b;
  std::string out;
  out.reserve(prefix.size() + 1 + ulid_chars);
  out.append(prefix);
  out.push_back('_');
  for (std::size_t i = 0; i < ulid_chars; ++i) {
    auto shift = 5 * (ulid_chars - 1 - i);
    out.push_back(crockford[static_cast<std::size_t>((v >> shift) & 31)]);
  }
  return out;
}

bool is_valid_id(std::string_view s, std::string_view prefix) {
  if (s.size() != prefix.size() + 1 + ulid_chars || s.substr(0, prefix.size()) != prefix ||
      s[prefix.size()] != '_')
    return false;
  auto body = s.substr(prefix.size() + 1);
  if (body[0] > '7')
    return false; // the first character carries only 3 bits
  return std::all_of(body.begin(), body.end(),
                     [](char c) { return crockford.find(c) != std::string_view::npos; });
}

} // namespace sreh
