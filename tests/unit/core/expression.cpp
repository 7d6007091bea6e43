#define CAF_SUITE core_expression
#include "core/expr/expression.hpp"

#include <caf/test/unit_test.hpp>

#include <map>
#include <string>

using namespace sreh;

namespace {

/// Values by "entity.metric"; an unknown one is an error naming it.
expr::lookup values(std::map<std::string, double> m) {
  return [m = std::move(m)](const std::string& e, const std::string& k) -> expected<double> {
    auto i = m.find(e + "." + k);
    if (i == m.end())
      return sreh::error{errc::invalid_argument, "unknown '" + e + "." + k + "'"};
    return i->second;
  };
}

std::string run(const std::string& text, std::map<std::string, double> m) {
  auto r = expr::evaluate(text, values(std::move(m)));
  if (!r)
    return r.error().message;
  return *r ? "true" : "false";
}

} // namespace

CAF_TEST(parsed once and evaluated against changing values) {
  auto e = expr::parse("api.error_rate < 0.01 and (db-1.connections <= 40 or db-1.rps > 5)");
  CAF_REQUIRE(e.has_value());
  CAF_REQUIRE_EQUAL(e->comparisons().size(), 3u);
  CAF_CHECK_EQUAL(e->comparisons()[1].entity, std::string{"db-1"});
  CAF_CHECK_EQUAL(e->comparisons()[1].metric, std::string{"connections"});
  CAF_CHECK_EQUAL(e->comparisons()[1].op, std::string{"<="});
  CAF_CHECK_EQUAL(e->comparisons()[1].pos, 27u);
  std::map<std::string, double> now{
    {"api.error_rate", 0.2}, {"db-1.connections", 50}, {"db-1.rps", 1}};
  CAF_CHECK(!*e->evaluate(values(now)));
  now["api.error_rate"] = 0.001;
  CAF_CHECK(!*e->evaluate(values(now)));
  now["db-1.rps"] = 9;
  CAF_CHECK(*e->evaluate(values(now)));
}

CAF_TEST(and binds tighter than or and every name is checked) {
  // (a.x < 1 and a.x > 5) or a.x == 3; with `or` binding tighter it would be false.
  CAF_CHECK_EQUAL(run("a.x < 1 and a.x > 5 or a.x == 3", {{"a.x", 3}}), "true");
  CAF_CHECK_EQUAL(run("a.x > 1 or a.x < 5 and a.x > 9", {{"a.x", 0}}), "false");
  CAF_CHECK_EQUAL(run("(a.x > 1 or a.x < 5) and a.x > 9", {{"a.x", 3}}), "false");
  CAF_CHECK_EQUAL(run("a.x == 3 and b.y != 2", {{"a.x", 3}, {"b.y", 1}}), "true");
  // No short circuit: the unknown name on the right is reported although the left decides.
  CAF_CHECK_EQUAL(run("a.x > 1 or nope.y > 1", {{"a.x", 3}}), "position 12: unknown 'nope.y'");
}

CAF_TEST(syntax errors name the position) {
  CAF_CHECK_EQUAL(run("", {}), "position 1: empty expression");
  CAF_CHECK_EQUAL(run("a.x <", {}), "position 6: expected a number after '<'");
  CAF_CHECK_EQUAL(run("a.x = 1", {}), "position 5: unknown operator '=' (use == or !=)");
  CAF_CHECK_EQUAL(run("a < 1", {}), "position 1: expected <entity>.<metric>, got 'a'");
  CAF_CHECK_EQUAL(run("(a.x < 1", {}), "position 9: expected ')' to close '(' at position 1");
  CAF_CHECK_EQUAL(run("a.x < 1 a.x", {}), "position 9: expected 'and', 'or' or the end, got 'a.x'");
  CAF_CHECK_EQUAL(run("a.x < 1e999", {}), "position 7: number '1e999' is out of range");
  CAF_CHECK_EQUAL(run("a.x < 1 and", {}), "position 12: expected <entity>.<metric>, got the end");
  CAF_CHECK_EQUAL(run("a.x < #", {}), "position 7: unexpected '#'");
}
