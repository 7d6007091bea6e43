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

// -- values of any kind (flows) -------------------------------------------------------------------

namespace {

/// Values by path, of any kind.
expr::value_lookup typed(std::map<std::string, expr::value> m) {
  return [m = std::move(m)](const expr::comparison& c) -> expected<expr::value> {
    auto i = m.find(c.path);
    if (i == m.end())
      return sreh::error{errc::invalid_argument, "unknown '" + c.path + "'"};
    return i->second;
  };
}

std::string run_typed(const std::string& text, std::map<std::string, expr::value> m) {
  auto e = expr::parse(text, expr::literals::any);
  if (!e)
    return e.error().message;
  auto r = e->evaluate(typed(std::move(m)));
  if (!r)
    return r.error().message;
  return *r ? "true" : "false";
}

} // namespace

CAF_TEST(flows compare paths with strings and booleans too) {
  std::map<std::string, expr::value> v{{"inputs.severity", std::string{"sev1"}},
                                       {"inputs.dry_run", false},
                                       {"steps.check.output.current.rps", 12.0}};
  CAF_CHECK_EQUAL(run_typed("inputs.severity == \"sev1\"", v), "true");
  CAF_CHECK_EQUAL(run_typed("inputs.severity != 'sev1' or inputs.dry_run == false", v), "true");
  CAF_CHECK_EQUAL(run_typed("inputs.dry_run == true and steps.check.output.current.rps > 3", v),
                  "false");
  CAF_CHECK_EQUAL(run_typed("steps.check.output.current.rps >= 12", v), "true");
  CAF_CHECK_EQUAL(run_typed("inputs.severity == 'it\\'s'", v), "false");
  // Two kinds never compare equal silently: that is an error naming the path.
  CAF_CHECK_EQUAL(run_typed("inputs.severity == 1", v),
                  "position 1: 'inputs.severity' is a string, compared with a number");
  auto e = expr::parse("inputs.severity == \"sev1\"", expr::literals::any);
  CAF_REQUIRE(e.has_value());
  CAF_CHECK(std::get<std::string>(e->comparisons()[0].rhs) == "sev1");
  CAF_CHECK_EQUAL(e->comparisons()[0].entity, std::string{"inputs"});
}

CAF_TEST(strings and booleans compare with == and != only) {
  CAF_CHECK_EQUAL(run_typed("a.b < 'x'", {}),
                  "position 5: '<' compares numbers; a string compares with == or !=");
  CAF_CHECK_EQUAL(run_typed("a.b >= true", {}),
                  "position 5: '>=' compares numbers; a boolean compares with == or !=");
  CAF_CHECK_EQUAL(run_typed("a.b == 'x", {}), "position 8: unclosed '");
  CAF_CHECK_EQUAL(run_typed("a.b ==", {}),
                  "position 7: expected a number, a quoted string, true or false after '=='");
}

CAF_TEST(the conditions of worlds keep to numbers) {
  // Scenarios and done-criteria parse with literals::numbers: a string is refused as before.
  CAF_CHECK_EQUAL(run("a.x == 'up'", {{"a.x", 1}}), "position 8: expected a number after '=='");
  CAF_CHECK_EQUAL(run("a.x == true", {{"a.x", 1}}), "position 8: expected a number after '=='");
  // A string parsed for flows, evaluated against numbers only, is an error, not a silent 0.
  auto e = expr::parse("a.x == 'up'", expr::literals::any);
  CAF_REQUIRE(e.has_value());
  auto r = e->evaluate(values({{"a.x", 0}}));
  CAF_REQUIRE(!r);
  CAF_CHECK_EQUAL(r.error().message, "position 1: 'a.x' is a number, compared with a string");
}

CAF_TEST(the static check compares what is known before evaluation) {
  auto e = expr::parse("inputs.n > 3 and steps.a.output.x == 'y' and inputs.s == 'z'",
                       expr::literals::any);
  CAF_REQUIRE(e.has_value());
  auto types = [](std::map<std::string, std::optional<expr::value_kind>> m) {
    return [m](const expr::comparison& c) -> expected<std::optional<expr::value_kind>> {
      auto i = m.find(c.path);
      if (i == m.end())
        return sreh::error{errc::invalid_argument, "unknown '" + c.path + "'"};
      return i->second;
    };
  };
  using k = expr::value_kind;
  CAF_CHECK(!e->check_types(
    types({{"inputs.n", k::number}, {"steps.a.output.x", std::nullopt}, {"inputs.s", k::string}})));
  CAF_CHECK_EQUAL(e->check_types(types({{"inputs.n", k::string},
                                        {"steps.a.output.x", std::nullopt},
                                        {"inputs.s", k::string}}))
                    .message,
                  "position 1: 'inputs.n' is a string, compared with a number");
  CAF_CHECK_EQUAL(
    e->check_types(types({{"inputs.n", k::number}, {"steps.a.output.x", std::nullopt}})).message,
    "position 46: unknown 'inputs.s'");
}
