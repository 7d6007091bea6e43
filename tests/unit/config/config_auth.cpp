#define CAF_SUITE config_auth
#include <caf/test/unit_test.hpp>

#include <string>

#include "config/node/node_config.hpp"

using namespace sreh;
using namespace sreh::config;

namespace {

const std::string hash_a(64, 'a');
const std::string hash_b = "0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef";

/// The error of loading `yaml` as "cfg.yaml", or "(ok)".
std::string err(const std::string& yaml) {
  auto r = load_string(yaml, "cfg.yaml");
  if (r)
    return "(ok)";
  if (r.error().code != errc::invalid_argument)
    return "(wrong code) " + r.error().message;
  return r.error().message;
}

} // namespace

CAF_TEST(auth defaults to tokens with none configured) {
  auto r = load_string("", "cfg.yaml");
  CAF_REQUIRE(r.has_value());
  CAF_CHECK_EQUAL(r->auth.mode, std::string{"tokens"});
  CAF_CHECK(r->auth.tokens.empty());
}

CAF_TEST(tokens load with name role and a normalised hash) {
  auto r = load_string("auth:\n  mode: tokens\n  tokens:\n"
                       "    - {name: alice, role: approver, sha256: " +
                         hash_a +
                         "}\n"
                         "    - name: bob\n      role: viewer\n      sha256: " +
                         hash_b + "\n",
                       "cfg.yaml");
  CAF_REQUIRE(r.has_value());
  CAF_REQUIRE_EQUAL(r->auth.tokens.size(), 2u);
  CAF_CHECK_EQUAL(r->auth.tokens[0].name, std::string{"alice"});
  CAF_CHECK_EQUAL(r->auth.tokens[0].role, std::string{"approver"});
  CAF_CHECK_EQUAL(r->auth.tokens[0].sha256, hash_a);
  CAF_CHECK_EQUAL(r->auth.tokens[1].role, std::string{"viewer"});
  CAF_CHECK_EQUAL(r->auth.tokens[1].sha256,
                  std::string{"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"});
}

CAF_TEST(bad tokens are errors with file line and column) {
  auto two = "auth:\n  tokens:\n    - {name: alice, role: approver, sha256: " + hash_a + "}\n";
  CAF_CHECK_EQUAL(
    err(two + "    - {name: bob, role: viewer, sha256: abc}\n"),
    std::string{"cfg.yaml:4:41: auth.tokens[1].sha256: expected exactly 64 hex digits "
                "(the SHA-256 of the token; `sreh token hash TOKEN` prints it), got 3 "
                "characters"});
  CAF_CHECK_EQUAL(err(two + "    - {name: alice, role: viewer, sha256: " + hash_b + "}\n"),
                  std::string{"cfg.yaml:4:14: auth.tokens[1].name: duplicate token name 'alice'"});
  CAF_CHECK_EQUAL(
    err(two + "    - {name: bob, role: root, sha256: " + hash_b + "}\n"),
    std::string{"cfg.yaml:4:25: auth.tokens[1].role: expected one of viewer, operator, "
                "approver, admin, got 'root'"});
  CAF_CHECK_EQUAL(err(two + "    - {name: bob, sha256: " + hash_b + "}\n"),
                  std::string{"cfg.yaml:4:7: auth.tokens[1]: missing key 'role'"});
  CAF_CHECK_EQUAL(err(two + "    - {name: bob, role: viewer, sha256: " + hash_b + ", token: x}\n"),
                  std::string{"cfg.yaml:4:107: auth.tokens[1].token: unknown key 'token' (expected "
                              "one of name, role, sha256)"});
  auto sixty_four_non_hex = std::string(63, 'a') + "z";
  CAF_CHECK(
    err("auth:\n  tokens:\n    - {name: a, role: admin, sha256: " + sixty_four_non_hex + "}\n")
      .find("auth.tokens[0].sha256: expected exactly 64 hex digits") != std::string::npos);
  CAF_CHECK_EQUAL(err("auth:\n  tokens: {name: a}\n"),
                  std::string{"cfg.yaml:2:11: auth.tokens: expected a sequence of {name, role, "
                              "sha256}"});
  CAF_CHECK_EQUAL(err("auth:\n  mode: open\n"),
                  std::string{"cfg.yaml:2:9: auth.mode: expected one of tokens, none, got 'open'"});
}

CAF_TEST(auth none only on a loopback listen address) {
  for (const char* listen : {"127.0.0.1:7070", "127.1.2.3:0", "localhost:7070", "[::1]:7070"}) {
    auto text = std::string("listen: \"") + listen + "\"\nauth: {mode: none}\n";
    CAF_CHECK_EQUAL(err(text), std::string{"(ok)"});
    CAF_CHECK_EQUAL(err(std::string("listen: \"") + listen + "\"\nauth: none\n"),
                    std::string{"(ok)"});
  }
  CAF_CHECK_EQUAL(err("listen: 0.0.0.0:7070\nauth:\n  mode: none\n"),
                  std::string{"cfg.yaml:3:9: auth.mode: none is allowed only when listen is a "
                              "loopback address (127.0.0.0/8, ::1, localhost), but listen host is "
                              "'0.0.0.0'"});
  for (const char* listen : {"10.0.0.1:7070", "[::]:7070", "128.0.0.1:1", "127.0.0:1",
                             "127.0.0.1.5:1", "example.com:80"}) {
    auto text = std::string("listen: \"") + listen + "\"\nauth: none\n";
    CAF_CHECK(err(text).find("auth.mode: none is allowed only") != std::string::npos);
  }
}

CAF_TEST(finalize rechecks auth after a listen override) {
  auto r = load_string("auth: none\n", "cfg.yaml");
  CAF_REQUIRE(r.has_value());
  r->listen = "0.0.0.0:7070";
  auto e = finalize(*r);
  CAF_CHECK(e.code == errc::invalid_argument);
  CAF_CHECK(e.message.rfind("auth.mode: none is allowed only", 0) == 0);
  CAF_CHECK(is_loopback_host("127.0.0.1"));
  CAF_CHECK(is_loopback_host("[::1]"));
  CAF_CHECK(!is_loopback_host("0.0.0.0"));
  CAF_CHECK(!is_loopback_host("localhost.example.com"));
}
