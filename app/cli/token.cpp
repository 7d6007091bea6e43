// `sreh token hash|new`: tokens for the `auth.tokens` section of a config (offline).
#include <cstdio>
#include <string_view>

#include "app/cli/client.hpp"
#include "net/http/auth.hpp"

namespace sreh::app {

namespace {

constexpr const char* token_usage = R"(usage:
  sreh token hash TOKEN   print the SHA-256 (hex) of TOKEN, for auth.tokens[].sha256
  sreh token new          print a fresh random token and its SHA-256
)";

} // namespace

int token_command(int argc, char** argv) {
  std::string_view sub = argc > 0 ? argv[0] : "";
  if (sub == "--help" || sub == "-h" || sub == "help") {
    std::fputs(token_usage, stdout);
    return 0;
  }
  if (sub == "hash" && argc == 2) {
    std::printf("%s\n", net::sha256_hex(argv[1]).c_str());
    return 0;
  }
  if (sub == "new" && argc == 1) {
    auto token = net::random_token();
    if (!token) {
      std::fprintf(stderr, "sreh token new: %s\n", token.error().message.c_str());
      return 1;
    }
    std::printf("token:  %s\nsha256: %s\n", token->c_str(), net::sha256_hex(*token).c_str());
    std::fprintf(stderr,
                 "(give the token to its user, e.g. as SREH_TOKEN; put only the sha256 in the "
                 "config:\n  auth:\n    tokens:\n      - {name: NAME, role: viewer|operator|"
                 "approver|admin, sha256: %s})\n",
                 net::sha256_hex(*token).c_str());
    return 0;
  }
  std::fputs(token_usage, stderr);
  return 2;
}

} // namespace sreh::app
