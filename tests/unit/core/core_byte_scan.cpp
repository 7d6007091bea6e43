#define CAF_SUITE core_byte_scan
#include <caf/test/unit_test.hpp>

#include <string>

#include "core/base/byte_scan.hpp"
#include "core/base/json.hpp"

using namespace sreh;

namespace {

/// Every length up to 40 (a block of 16 bytes, two, and tails of each size) and every
/// position of one special byte in it: the scan finds exactly that position.
template <class Find>
int misses_of(Find find, unsigned char special) {
  int misses = 0;
  for (std::size_t len = 0; len <= 40; ++len) {
    const std::string plain(len, 'a');
    misses += find(plain) != len;
    for (std::size_t at = 0; at < len; ++at) {
      auto s = plain;
      s[at] = static_cast<char>(special);
      if (at + 1 < len)
        s.back() = '"'; // a later special never wins over the first
      misses += find(s) != at;
    }
  }
  return misses;
}

} // namespace

CAF_TEST(the first quote or backslash is found at every offset) {
  auto find = [](const std::string& s) { return find_quote_or_backslash(s); };
  CAF_CHECK_EQUAL(misses_of(find, '"'), 0);
  CAF_CHECK_EQUAL(misses_of(find, '\\'), 0);
  // Bytes that JSON escapes but an array literal keeps are plain here.
  CAF_CHECK_EQUAL(find_quote_or_backslash("\n\t\x01\xc3\xbc abc"), 9u);
}

CAF_TEST(the first byte JSON treats specially is found at every offset) {
  auto find = [](const std::string& s) { return find_json_special(s); };
  for (unsigned char b : {'"', '\\', '\n', '\x00', '\x1f', '\x80', '\xc3', '\xff'})
    CAF_CHECK_EQUAL(misses_of(find, b), 0);
  CAF_CHECK_EQUAL(find_json_special(" ~abcdefghijklmnopqrstuvwxyz{}!"), 31u); // 0x20 and 0x7e
}

CAF_TEST(quoting a long text escapes each special byte wherever it falls) {
  std::string s, want = "\"";
  for (int i = 0; i < 100; ++i) {
    s += std::string(static_cast<std::size_t>(i % 19), 'x') + "\"\\\n\xc3\xbc";
    want += std::string(static_cast<std::size_t>(i % 19), 'x') + "\\\"\\\\\\n\xc3\xbc";
  }
  CAF_CHECK_EQUAL(json::quote(s), want + "\"");
}
