#define CAF_SUITE net_auth
#include <string>

#include "net/http/auth.hpp"
#include "net/http/router.hpp"
#include "tests/support/caf_test.hpp"

using namespace sreh;
using namespace sreh::net;

namespace {

// echo -n "alice-token" | sha256sum
constexpr const char* alice_token = "alice-token";

token_table sample_table() {
  token_table t;
  t.add("vera", access::viewer, sha256("vera-token"));
  t.add("otto", access::operator_, sha256("otto-token"));
  t.add("alice", access::approver, sha256(alice_token));
  t.add("root", access::admin, sha256("root-token"));
  return t;
}

std::string bearer(const std::string& token) {
  return "Bearer " + token;
}

} // namespace

CAF_TEST(sha256 matches the known vectors) {
  CAF_CHECK_EQUAL(sha256_hex(""),
                  std::string{"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"});
  CAF_CHECK_EQUAL(sha256_hex("abc"),
                  std::string{"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"});
}

CAF_TEST(digests parse from 64 hex digits of either case only) {
  auto hex = sha256_hex("abc");
  auto d = parse_digest(hex);
  CAF_REQUIRE(d.has_value());
  CAF_CHECK(*d == sha256("abc"));
  std::string upper = hex;
  for (auto& c : upper)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  CAF_CHECK(parse_digest(upper) == d);
  CAF_CHECK(!parse_digest(hex.substr(1)));
  CAF_CHECK(!parse_digest(hex + "0"));
  CAF_CHECK(!parse_digest(std::string(63, 'a') + "g"));
  CAF_CHECK(!parse_digest(""));
}

CAF_TEST(random tokens are 64 hex characters and differ) {
  auto a = random_token();
  auto b = random_token();
  CAF_REQUIRE(a.has_value() && b.has_value());
  CAF_CHECK_EQUAL(a->size(), 64u);
  CAF_CHECK(parse_digest(*a).has_value());
  CAF_CHECK_NOT_EQUAL(*a, *b);
}

CAF_TEST(the table finds a token by its hash and nothing else) {
  auto t = sample_table();
  auto who = t.find(alice_token);
  CAF_REQUIRE(who.has_value());
  CAF_CHECK_EQUAL(who->name, std::string{"alice"});
  CAF_CHECK(who->role == access::approver);
  auto root = t.find("root-token");
  CAF_REQUIRE(root.has_value());
  CAF_CHECK_EQUAL(root->name, std::string{"root"});
  CAF_CHECK(!t.find("alice-token2"));
  CAF_CHECK(!t.find(""));
  CAF_CHECK(!t.find(sha256_hex(alice_token))); // the hash itself is not a token
  CAF_CHECK(!token_table{}.find(alice_token)); // an empty table accepts nothing
}

CAF_TEST(roles parse and order) {
  CAF_CHECK(parse_role("viewer") == access::viewer);
  CAF_CHECK(parse_role("operator") == access::operator_);
  CAF_CHECK(parse_role("approver") == access::approver);
  CAF_CHECK(parse_role("admin") == access::admin);
  CAF_CHECK(!parse_role("Admin"));
  CAF_CHECK(!parse_role("open"));
  CAF_CHECK(!parse_role(""));
  CAF_CHECK_EQUAL(std::string{to_string(access::operator_)}, std::string{"operator"});
}

CAF_TEST(authenticate answers 401 for missing or malformed or unknown tokens) {
  auto t = sample_table();
  auto r = authenticate(t, nullptr, access::viewer, "GET /v1/runs");
  CAF_CHECK_EQUAL(r.status, 401);
  for (std::string bad : {"", "Bearer", "Bearer ", "Basic dXNlcjpwYXNz", "Token root-token",
                          "Bearer root token", "Bearer root-token\x01"}) {
    auto b = authenticate(t, &bad, access::viewer, "GET /v1/runs");
    CAF_CHECK_EQUAL(b.status, 401);
  }
  auto unknown = bearer("nope");
  CAF_CHECK_EQUAL(authenticate(t, &unknown, access::viewer, "GET /v1/runs").status, 401);
}

CAF_TEST(authenticate checks the role against the route) {
  auto t = sample_table();
  auto vera = bearer("vera-token");
  auto otto = bearer("otto-token");
  auto alice = bearer(alice_token);
  auto root = std::string("bearer   root-token  "); // scheme is case-insensitive
  auto ok = authenticate(t, &vera, access::viewer, "GET /v1/runs");
  CAF_CHECK_EQUAL(ok.status, 200);
  CAF_CHECK_EQUAL(ok.who.name, std::string{"vera"});
  auto no = authenticate(t, &vera, access::operator_, "POST /v1/goals");
  CAF_CHECK_EQUAL(no.status, 403);
  CAF_CHECK_EQUAL(no.detail, std::string{"role viewer may not POST /v1/goals (needs operator)"});
  CAF_CHECK_EQUAL(authenticate(t, &otto, access::operator_, "POST /v1/goals").status, 200);
  CAF_CHECK_EQUAL(authenticate(t, &otto, access::approver, "POST /v1/approvals/x/decision").status,
                  403);
  CAF_CHECK_EQUAL(authenticate(t, &alice, access::approver, "POST /v1/approvals/x/decision").status,
                  200);
  CAF_CHECK_EQUAL(authenticate(t, &alice, access::operator_, "POST /v1/goals").status, 200);
  auto admin = authenticate(t, &root, access::admin, "GET /v1/stats");
  CAF_CHECK_EQUAL(admin.status, 200);
  CAF_CHECK_EQUAL(admin.who.name, std::string{"root"});
}

CAF_TEST(open routes need no token and auth none makes everyone local admin) {
  auto t = sample_table();
  CAF_CHECK_EQUAL(authenticate(t, nullptr, access::open, "GET /healthz").status, 200);
  auto off = token_table::disabled();
  CAF_CHECK(!off.enabled());
  auto r = authenticate(off, nullptr, access::admin, "POST /v1/goals");
  CAF_CHECK_EQUAL(r.status, 200);
  CAF_CHECK_EQUAL(r.who.name, std::string{"local"});
  CAF_CHECK(r.who.role == access::admin);
}

CAF_TEST(every route states what it needs) {
  router r;
  r.add("GET", "/healthz", access::open, {});
  r.add("POST", "/v1/goals", access::operator_, {});
  r.add("POST", "/v1/approvals/{id}/decision", access::approver, {});
  auto m = r.find("POST", "/v1/approvals/apr_x/decision");
  CAF_REQUIRE(m.found != nullptr);
  CAF_CHECK(m.found->need == access::approver);
  CAF_CHECK(r.find("GET", "/healthz").found->need == access::open);
  CAF_CHECK(r.find("POST", "/v1/goals").found->need == access::operator_);
}
