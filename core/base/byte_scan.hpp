#pragma once
// Finding the first byte of a text that an encoder must treat specially, sixteen bytes at a time
// where the CPU has SSE2 (every x86-64), a byte at a time elsewhere. The encoders of the hot path
// (json::quote_into, the PostgreSQL array literals of persistence/postgres/rows.cpp) copy the
// plain run before that byte at once; JSON has a quote every few bytes, so the runs are short
// and the scan is most of their cost.

#include <cstddef>
#include <string_view>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace sreh {

namespace detail {

/// The offset of the first byte of `s` for which `special(byte)` holds, from `from`, scanning
/// a byte at a time; `s.size()` when there is none.
template <class Special>
[[nodiscard]] inline std::size_t scan_bytes(std::string_view s, std::size_t from, Special special) {
  for (; from < s.size(); ++from)
    if (special(static_cast<unsigned char>(s[from])))
      return from;
  return s.size();
}

#if defined(__SSE2__)
/// The offset of the first byte of `s` whose lane in `mask_of(16 bytes)` is set, sixteen bytes
/// at a time, the tail by `special`; `s.size()` when there is none.
template <class MaskOf, class Special>
[[nodiscard]] inline std::size_t scan_blocks(std::string_view s, MaskOf mask_of, Special special) {
  std::size_t i = 0;
  for (; i + 16 <= s.size(); i += 16) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s.data() + i));
    if (const int m = _mm_movemask_epi8(mask_of(x)); m != 0)
      return i + static_cast<std::size_t>(__builtin_ctz(static_cast<unsigned>(m)));
  }
  return scan_bytes(s, i, special);
}
#endif

} // namespace detail

/// The offset of the first '"' or '\\' in `s`; `s.size()` when there is none.
[[nodiscard]] inline std::size_t find_quote_or_backslash(std::string_view s) {
  auto special = [](unsigned char b) { return b == '"' || b == '\\'; };
#if defined(__SSE2__)
  return detail::scan_blocks(
    s,
    [](__m128i x) {
      return _mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('"')),
                          _mm_cmpeq_epi8(x, _mm_set1_epi8('\\')));
    },
    special);
#else
  return detail::scan_bytes(s, 0, special);
#endif
}

/// The offset of the first byte of `s` that a JSON string cannot hold as it is: a control
/// character (below 0x20), '"', '\\', or any byte from 0x80 (UTF-8, which the encoder checks);
/// `s.size()` when there is none.
[[nodiscard]] inline std::size_t find_json_special(std::string_view s) {
  auto special = [](unsigned char b) { return b < 0x20 || b >= 0x80 || b == '"' || b == '\\'; };
#if defined(__SSE2__)
  return detail::scan_blocks(
    s,
    [](__m128i x) {
      // Signed bytes: below 0x20 or from 0x80 (negative) is one comparison.
      return _mm_or_si128(_mm_cmplt_epi8(x, _mm_set1_epi8(0x20)),
                          _mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('"')),
                                       _mm_cmpeq_epi8(x, _mm_set1_epi8('\\'))));
    },
    special);
#else
  return detail::scan_bytes(s, 0, special);
#endif
}

} // namespace sreh
