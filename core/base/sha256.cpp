#include "core/base/sha256.hpp"

#include <openssl/evp.h>
#include <openssl/hmac.h>

namespace sreh {

void to_hex(const unsigned char* data, std::size_t n, char* out) {
  static constexpr char digits[] = "0123456789abcdef";
  for (std::size_t i = 0; i < n; ++i) {
    out[2 * i] = digits[data[i] >> 4];
    out[2 * i + 1] = digits[data[i] & 0x0f];
  }
}

std::string to_hex(const unsigned char* data, std::size_t n) {
  std::string out(n * 2, '\0');
  to_hex(data, n, out.data());
  return out;
}

sha256_hasher::sha256_hasher()
  : md_(EVP_MD_fetch(nullptr, "SHA256", nullptr)), ctx_(EVP_MD_CTX_new()) {}

sha256_hasher::~sha256_hasher() {
  EVP_MD_CTX_free(ctx_);
  EVP_MD_free(md_);
}

bool sha256_hasher::digest(std::string_view data, sha256_digest& out) {
  if (md_ == nullptr || ctx_ == nullptr)
    return false;
  unsigned int n = 0;
  return EVP_DigestInit_ex2(ctx_, md_, nullptr) == 1 &&
         EVP_DigestUpdate(ctx_, data.data(), data.size()) == 1 &&
         EVP_DigestFinal_ex(ctx_, out.data(), &n) == 1 && n == out.size();
}

sha256_digest sha256(std::string_view data) {
  thread_local sha256_hasher h;
  sha256_digest d{};
  if (!h.digest(data, d))
    d.fill(0);
  return d;
}

std::string sha256_hex(std::string_view data) {
  const auto d = sha256(data);
  return to_hex(d.data(), d.size());
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

std::optional<sha256_digest> parse_sha256_hex(std::string_view hex) {
  if (hex.size() != 64)
    return std::nullopt;
  sha256_digest d{};
  for (std::size_t i = 0; i < d.size(); ++i) {
    int hi = hex_digit(hex[2 * i]);
    int lo = hex_digit(hex[2 * i + 1]);
    if (hi < 0 || lo < 0)
      return std::nullopt;
    d[i] = static_cast<unsigned char>(hi << 4 | lo);
  }
  return d;
}

std::string hmac_sha256_hex(std::string_view key, std::string_view data) {
  sha256_digest out{};
  unsigned int n = 0;
  if (HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
           reinterpret_cast<const unsigned char*>(data.data()), data.size(), out.data(),
           &n) == nullptr ||
      n != out.size())
    return {};
  return to_hex(out.data(), out.size());
}

} // namespace sreh
