#define CAF_SUITE sandbox_per_request
#include <cmath>

#include "tests/support/caf_test.hpp"
#include "tests/support/sandbox_fixture.hpp"

using namespace sandbox_fixture;

// Call edges that make several calls per request (`calls: [{name: kv, per_request: 12}]`): the
// callee's extra latency reaches the caller once per call, its errors as the chance that any of
// the calls fails. The plain form is one call, as before.
namespace {

/// many → kv twelve times per request, once → kv once (plain form), mapped → kv through the
/// mapping form without a count; chain → mid (3 per request) → kv (4 per request);
/// fanout → lookup (4 per request), single → lookup once.
const char* world_yaml = R"(world:
  world: p
  services:
    - {name: many, calls: [{name: kv, per_request: 12}], baseline: {latency_p99_ms: 100, error_rate: 0.001}}
    - {name: once, calls: [kv], baseline: {latency_p99_ms: 100, error_rate: 0.001}}
    - {name: mapped, calls: [{name: kv}], baseline: {latency_p99_ms: 100, error_rate: 0.001}}
    - {name: chain, calls: [{name: mid, per_request: 3}], baseline: {latency_p99_ms: 100, error_rate: 0.001}}
    - {name: mid, calls: [{name: kv, per_request: 4}], baseline: {latency_p99_ms: 50, error_rate: 0.001}}
    - {name: fanout, calls: [{name: lookup, per_request: 4}], baseline: {latency_p99_ms: 100, error_rate: 0.001}}
    - {name: single, calls: [lookup], baseline: {latency_p99_ms: 100, error_rate: 0.001}}
    - {name: lookup, version: v1.0.0, baseline: {latency_p99_ms: 20, error_rate: 0.001}}
    - {name: kv, kind: cache, baseline: {latency_p99_ms: 2}}
  hosts:
    - {name: h, services: [many, once, mapped, chain, mid, fanout, single, lookup, kv]}
)";

std::shared_ptr<sb::world> world_with(const std::string& faults) {
  auto text = std::string{"scenario: p\n"} + world_yaml + "seed: 3\nfaults:\n" + faults +
              "alert: {name: A}\ngoal: g\nexpect: {detected: true}\n";
  auto sc = sb::load_scenario_string(text, "per_request.yaml");
  if (!sc) {
    std::fprintf(stderr, "scenario failed to load: %s\n", sc.error().message.c_str());
    return nullptr;
  }
  return std::make_shared<sb::world>(std::move(*sc));
}

/// The extra of `metric` on `entity` over its baseline `base`, without the seeded noise: both
/// worlds share the seed and the minute, so the noise factor cancels in the ratio.
double excess(const sb::world& faulty, const sb::world& healthy, const char* entity,
              const char* metric, double base) {
  return base * (m(faulty, entity, metric) / m(healthy, entity, metric) - 1);
}

} // namespace

CAF_TEST(the plain form and per_request 1 are one call each) {
  auto w = world_with("  - {kind: none}\n");
  CAF_REQUIRE(w != nullptr);
  const auto& model = w->spec().world;
  CAF_CHECK_EQUAL(model.find_service("many")->calls_per_request("kv"), 12);
  CAF_CHECK_EQUAL(model.find_service("once")->calls_per_request("kv"), 1);
  CAF_CHECK_EQUAL(model.find_service("mapped")->calls_per_request("kv"), 1);
  CAF_CHECK_EQUAL(model.find_service("many")->calls.size(), 1u);
  CAF_CHECK_EQUAL(model.find_service("many")->calls.front(), "kv");
  // Healthy: a per_request edge adds nothing over the caller's own baseline.
  CAF_CHECK_LESS(std::abs(m(*w, "many", "latency_p99_ms") - 100), 5);
}

CAF_TEST(a slow cache behind a 12 - per - request edge moves its caller 12 times as much) {
  auto slow = world_with("  - {kind: dependency_slowdown, target: kv, at: -10m}\n");
  auto fine = world_with("  - {kind: none}\n");
  CAF_REQUIRE(slow != nullptr && fine != nullptr);
  // kv: 2 ms → 16 ms, 14 ms extra; a caller sees 0.8 of a callee's extra p99 per call.
  auto extra = excess(*slow, *fine, "kv", "latency_p99_ms", 2);
  CAF_CHECK_LESS(std::abs(extra - 14), 1e-6);
  auto once = excess(*slow, *fine, "once", "latency_p99_ms", 100);
  auto many = excess(*slow, *fine, "many", "latency_p99_ms", 100);
  CAF_CHECK_LESS(std::abs(once - 0.8 * 14), 1e-6); // the plain form: unchanged
  CAF_CHECK_LESS(std::abs(many - 12 * 0.8 * 14), 1e-6);
  CAF_CHECK_LESS(std::abs(many / once - 12), 1e-6);
  CAF_CHECK_LESS(std::abs(excess(*slow, *fine, "mapped", "latency_p99_ms", 100) - once), 1e-6);
  // Visible where it was hidden: ~+134 ms on a 100 ms caller, against ~+11 ms for one call.
  CAF_CHECK_GREATER(m(*slow, "many", "latency_p99_ms"), 200);
  CAF_CHECK_LESS(m(*slow, "once", "latency_p99_ms"), 120);
  // Along a chain the counts multiply: chain → mid 3 per request → kv 4 per request.
  auto mid = excess(*slow, *fine, "mid", "latency_p99_ms", 50);
  CAF_CHECK_LESS(std::abs(mid - 4 * 0.8 * 14), 1e-6);
  CAF_CHECK_LESS(std::abs(excess(*slow, *fine, "chain", "latency_p99_ms", 100) - 3 * 0.8 * mid),
                 1e-6);
  // Scaling the cache out clears it everywhere.
  sb::action scale;
  scale.kind = sb::action_kind::scale;
  scale.target = "kv";
  scale.number = 2;
  CAF_REQUIRE(act(*slow, scale));
  CAF_CHECK_LESS(m(*slow, "many", "latency_p99_ms"), 110);
}

CAF_TEST(errors over several calls count as the chance that any call fails) {
  auto bad = world_with("  - {kind: bad_deploy, target: lookup, version: v1.1.0, at: -10m}\n");
  auto fine = world_with("  - {kind: none}\n");
  CAF_REQUIRE(bad != nullptr && fine != nullptr);
  auto p = excess(*bad, *fine, "lookup", "error_rate", 0.001);
  CAF_CHECK_LESS(std::abs(p - 0.25), 1e-9);
  auto single = excess(*bad, *fine, "single", "error_rate", 0.001);
  auto fanout = excess(*bad, *fine, "fanout", "error_rate", 0.001);
  CAF_CHECK_LESS(std::abs(single - 0.6 * 0.25), 1e-9); // the plain form: unchanged
  CAF_CHECK_LESS(std::abs(fanout - 0.6 * (1 - std::pow(0.75, 4))), 1e-9);
  // More than one call fails more often, but never more than every request.
  CAF_CHECK_GREATER(fanout, single);
  CAF_CHECK_LESS(fanout, 4 * single);
  CAF_CHECK_LESS(m(*bad, "fanout", "error_rate"), 1.0);
}
