#define CAF_SUITE core_goal
#include <caf/test/unit_test.hpp>

#include <string>

#include "core/model/goal.hpp"

using namespace sreh;

namespace {

const run_budget defaults{50, 200'000, 0, 64 * 1024, 0};

/// The error message for `body`, or "(ok)".
std::string err(std::string_view body) {
  auto r = parse_goal_request(body, defaults);
  if (r)
    return "(ok)";
  if (r.error().code != errc::invalid_argument)
    return "(wrong code) " + r.error().message;
  return r.error().message;
}

} // namespace

CAF_TEST(minimal request takes the defaults) {
  auto r = parse_goal_request(R"({"goal":"  checkout p99 is high \n"})", defaults);
  CAF_CHECK(r.has_value());
  if (!r)
    return;
  CAF_CHECK_EQUAL(r->goal, std::string{"checkout p99 is high"});
  CAF_CHECK_EQUAL(r->labels, std::string{"{}"});
  CAF_CHECK_EQUAL(r->budget.max_steps, 50);
  CAF_CHECK_EQUAL(r->budget.max_tokens, 200'000);
  CAF_CHECK_EQUAL(r->budget.deadline_us, 0);
  CAF_CHECK_EQUAL(r->budget.max_result_bytes, 64 * 1024);
}

CAF_TEST(full request) {
  auto r = parse_goal_request(R"({"goal":"g","labels":{"service":"checkout","k8s.io/ns":"prod"},)"
                              R"("budget":{"max_steps":10,"max_tokens":1000,)"
                              R"("max_result_bytes":512,"deadline_seconds":300}})",
                              defaults);
  CAF_CHECK(r.has_value());
  if (!r)
    return;
  CAF_CHECK_EQUAL(r->labels, std::string{R"({"service":"checkout","k8s.io/ns":"prod"})"});
  CAF_CHECK_EQUAL(r->budget.max_steps, 10);
  CAF_CHECK_EQUAL(r->budget.max_tokens, 1000);
  CAF_CHECK_EQUAL(r->budget.max_result_bytes, 512);
  CAF_CHECK_EQUAL(r->budget.deadline_us, 300'000'000);
}

CAF_TEST(body errors) {
  CAF_CHECK_EQUAL(err("[1]"), std::string{"expected a JSON object, got array"});
  CAF_CHECK_EQUAL(err("{\"goal\":"), std::string{"invalid JSON at byte 8: Invalid value."});
  std::string deep = R"({"goal":"g","labels":)" + std::string(40, '[') + std::string(40, ']') + "}";
  CAF_CHECK(err(deep).find("JSON nesting deeper than 32 levels") == 0);
}

CAF_TEST(goal errors) {
  CAF_CHECK_EQUAL(err("{}"), std::string{"field 'goal': is required"});
  CAF_CHECK_EQUAL(err(R"({"goal":42})"),
                  std::string{"field 'goal': expected a string, got number"});
  CAF_CHECK_EQUAL(err(R"({"goal":null})"),
                  std::string{"field 'goal': expected a string, got null"});
  CAF_CHECK_EQUAL(err(R"({"goal":" \t\n "})"), std::string{"field 'goal': must not be empty"});
  CAF_CHECK_EQUAL(err(R"({"goal":""})"), std::string{"field 'goal': must not be empty"});
  std::string big = R"({"goal":")" + std::string(4097, 'x') + "\"}";
  CAF_CHECK_EQUAL(err(big), std::string{"field 'goal': expected at most 4096 bytes, got 4097"});
  std::string max = R"({"goal":")" + std::string(4096, 'x') + "\"}";
  CAF_CHECK_EQUAL(err(max), std::string{"(ok)"});
  CAF_CHECK_EQUAL(err(R"({"goal":"a","goal":"b"})"), std::string{"field 'goal': duplicate field"});
}

CAF_TEST(unknown fields) {
  CAF_CHECK_EQUAL(err(R"({"goal":"g","priority":1})"),
                  std::string{"field 'priority': unknown field (expected goal, labels or budget)"});
  CAF_CHECK_EQUAL(err(R"({"goal":"g","budget":{"max_step":1}})"),
                  std::string{"field 'budget.max_step': unknown field (expected max_steps, "
                              "max_tokens, max_result_bytes, max_cost or deadline_seconds)"});
}

CAF_TEST(label errors) {
  CAF_CHECK_EQUAL(err(R"({"goal":"g","labels":[]})"),
                  std::string{"field 'labels': expected an object, got array"});
  CAF_CHECK_EQUAL(err(R"({"goal":"g","labels":{"env":1}})"),
                  std::string{"field 'labels.env': expected a string, got number"});
  CAF_CHECK_EQUAL(err(R"({"goal":"g","labels":{"bad key":"x"}})"),
                  std::string{"field 'labels.bad key': invalid label key (1..63 characters of "
                              "[a-zA-Z0-9_.-/])"});
  CAF_CHECK(err(R"({"goal":"g","labels":{"":"x"}})").find("invalid label key") !=
            std::string::npos);
  std::string long_key(64, 'k');
  CAF_CHECK(err(R"({"goal":"g","labels":{")" + long_key + R"(":"x"}})").find("invalid label key") !=
            std::string::npos);
  std::string long_value(257, 'v');
  CAF_CHECK_EQUAL(err(R"({"goal":"g","labels":{"a":")" + long_value + "\"}}"),
                  std::string{"field 'labels.a': expected at most 256 bytes, got 257"});
  std::string many = R"({"goal":"g","labels":{)";
  for (int i = 0; i < 33; ++i)
    many += (i ? ",\"l" : "\"l") + std::to_string(i) + "\":\"v\"";
  many += "}}";
  CAF_CHECK_EQUAL(err(many), std::string{"field 'labels': expected at most 32 labels, got 33"});
  CAF_CHECK_EQUAL(err(R"({"goal":"g","labels":{"a":"1","a":"2"}})"),
                  std::string{"field 'labels.a': duplicate label"});
}

CAF_TEST(cost budget) {
  auto r = parse_goal_request(R"({"goal":"g","budget":{"max_cost":0.25}})", defaults);
  CAF_REQUIRE(r.has_value());
  CAF_CHECK_EQUAL(r->budget.max_cost, 0.25);
  auto plain = parse_goal_request(R"({"goal":"g"})", defaults); // a local: CAF_CHECK reads it late
  CAF_REQUIRE(plain.has_value());
  CAF_CHECK_EQUAL(plain->budget.max_cost, 0.0);
  CAF_CHECK_EQUAL(err(R"({"goal":"g","budget":{"max_cost":0}})"),
                  std::string{"field 'budget.max_cost': expected a number above 0 and at most "
                              "1000000, got 0"});
  CAF_CHECK_EQUAL(err(R"({"goal":"g","budget":{"max_cost":"1"}})"),
                  std::string{"field 'budget.max_cost': expected a number above 0 and at most "
                              "1000000, got string"});
  // A node with a cost limit: a request may lower it, never raise it.
  run_budget capped = defaults;
  capped.max_cost = 2;
  auto lower = parse_goal_request(R"({"goal":"g","budget":{"max_cost":1.5}})", capped);
  CAF_REQUIRE(lower.has_value());
  CAF_CHECK_EQUAL(lower->budget.max_cost, 1.5);
  auto higher = parse_goal_request(R"({"goal":"g","budget":{"max_cost":3}})", capped);
  CAF_REQUIRE(!higher.has_value());
  CAF_CHECK_EQUAL(higher.error().message,
                  std::string{"field 'budget.max_cost': expected a number above 0 and at most 2, "
                              "got 3"});
}

CAF_TEST(budget errors) {
  CAF_CHECK_EQUAL(err(R"({"goal":"g","budget":3})"),
                  std::string{"field 'budget': expected an object, got number"});
  CAF_CHECK_EQUAL(err(R"({"goal":"g","budget":{"max_steps":500}})"),
                  std::string{"field 'budget.max_steps': expected an integer between 1 and 50, "
                              "got 500"});
  CAF_CHECK_EQUAL(err(R"({"goal":"g","budget":{"max_steps":0}})"),
                  std::string{"field 'budget.max_steps': expected an integer between 1 and 50, "
                              "got 0"});
  CAF_CHECK_EQUAL(err(R"({"goal":"g","budget":{"max_steps":2.5}})"),
                  std::string{"field 'budget.max_steps': expected an integer between 1 and 50, "
                              "got 2.5"});
  CAF_CHECK_EQUAL(err(R"({"goal":"g","budget":{"max_tokens":"10"}})"),
                  std::string{"field 'budget.max_tokens': expected an integer between 1 and "
                              "200000, got string"});
  CAF_CHECK_EQUAL(err(R"({"goal":"g","budget":{"max_result_bytes":65537}})"),
                  std::string{"field 'budget.max_result_bytes': expected an integer between 1 "
                              "and 65536, got 65537"});
  CAF_CHECK_EQUAL(err(R"({"goal":"g","budget":{"deadline_seconds":86401}})"),
                  std::string{"field 'budget.deadline_seconds': expected an integer between 1 "
                              "and 86400, got 86401"});
  CAF_CHECK_EQUAL(err(R"({"goal":"g","budget":{"deadline_seconds":-5}})"),
                  std::string{"field 'budget.deadline_seconds': expected an integer between 1 "
                              "and 86400, got -5"});
}
