#define CAF_SUITE sandbox_expression
#include "tests/support/caf_test.hpp"
#include "tests/support/sandbox_fixture.hpp"

using namespace sandbox_fixture;

namespace {

std::string eval(const sb::world& w, const char* expr) {
  auto r = w.evaluate(expr);
  if (!r)
    return r.error().message;
  return *r ? "true" : "false";
}

} // namespace

CAF_TEST(comparisons and precedence) {
  auto w = make_world("  - {kind: none}\n");
  CAF_REQUIRE(w != nullptr);
  CAF_CHECK_EQUAL(eval(*w, "web.error_rate < 0.01"), "true");
  CAF_CHECK_EQUAL(eval(*w, "web.error_rate >= 0.01"), "false");
  CAF_CHECK_EQUAL(eval(*w, "db.connections<=100"), "true");
  CAF_CHECK_EQUAL(eval(*w, "train.stalled == 0 and train.stalled != 1"), "true");
  // `and` binds tighter: true or (false and false) = true; (true or false) and false = false.
  CAF_CHECK_EQUAL(eval(*w, "web.rps > 0 or web.rps < 0 and web.rps < 0"), "true");
  CAF_CHECK_EQUAL(eval(*w, "(web.rps > 0 or web.rps < 0) and web.rps < 0"), "false");
  CAF_CHECK_EQUAL(eval(*w, "web.rps < 0 and web.rps > 0 or web.rps > 0"), "true");
  CAF_CHECK_EQUAL(eval(*w, "g1.gpu_util > -1 and vm1.load >= 0"), "true");
}

CAF_TEST(errors name the position and what is unknown) {
  auto w = make_world("  - {kind: none}\n");
  CAF_REQUIRE(w != nullptr);
  CAF_CHECK_EQUAL(eval(*w, "nope.rps < 1"), "position 1: unknown entity 'nope'");
  CAF_CHECK_EQUAL(eval(*w, "web.rps < 1 and web.foo > 2"),
                  "position 17: unknown metric 'foo' of service 'web' (expected one of rps, "
                  "latency_p99_ms, error_rate, cpu, memory, restarts)");
  CAF_CHECK_EQUAL(eval(*w, "web.rps <"), "position 10: expected a number after '<'");
  CAF_CHECK_EQUAL(eval(*w, "web.rps = 1"), "position 9: unknown operator '=' (use == or !=)");
  CAF_CHECK_EQUAL(eval(*w, "web.rps < 1 and"),
                  "position 16: expected <entity>.<metric>, got the end");
  CAF_CHECK_EQUAL(eval(*w, "(web.rps < 1"), "position 13: expected ')' to close '(' at position 1");
  CAF_CHECK_EQUAL(eval(*w, "web < 1"), "position 1: expected <entity>.<metric>, got 'web'");
  CAF_CHECK_EQUAL(eval(*w, "web.rps < 1 web.rps < 2"),
                  "position 13: expected 'and', 'or' or the end, got 'web.rps'");
  CAF_CHECK_EQUAL(eval(*w, "beta.rps < 1"), "position 1: unknown entity 'beta'");
  CAF_CHECK_EQUAL(eval(*w, ""), "position 1: empty expression");
}

CAF_TEST(same seed and actions give identical metrics and logs) {
  auto run = [](std::uint64_t seed) {
    auto w = make_world("  - {kind: memory_leak, target: api, at: -30m}\n", seed);
    std::string out;
    sb::action a;
    a.kind = sb::action_kind::restart;
    a.target = "api";
    (void)w->apply("k1", a);
    for (int i = 0; i < 5; ++i) {
      w->advance(90);
      for (auto e : {"web", "api", "db", "vm1", "g1", "train"}) {
        auto ms = w->metrics(e);
        if (ms)
          for (auto& [k, v] : *ms)
            out += std::string{e} + "." + k + "=" + std::to_string(v) + "\n";
      }
    }
    sb::log_query q;
    q.entity = "api";
    auto lines = w->logs(q);
    if (lines)
      for (auto& l : *lines)
        out += std::to_string(l.at) + sb::to_string(l.level) + l.message + "\n";
    return out;
  };
  auto a = run(7), b = run(7), c = run(8);
  CAF_CHECK_EQUAL(a, b);
  CAF_CHECK_NOT_EQUAL(a, c);
  CAF_CHECK_GREATER(a.size(), 1000u);
}

CAF_TEST(noise is small and seeded) {
  auto w1 = make_world("  - {kind: none}\n", 1);
  auto w2 = make_world("  - {kind: none}\n", 2);
  CAF_CHECK_NOT_EQUAL(m(*w1, "web", "rps"), m(*w2, "web", "rps"));
  for (int i = 0; i < 30; ++i) {
    w1->advance(60);
    CAF_CHECK_LESS(std::abs(m(*w1, "web", "rps") - 100), 4);
  }
}
