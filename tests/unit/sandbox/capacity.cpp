#define CAF_SUITE sandbox_capacity
#include "tests/support/caf_test.hpp"
#include "tests/support/sandbox_fixture.hpp"

using namespace sandbox_fixture;
using sb::action_kind;

// A restarted job lands only where its GPUs are free: not on a serving host, not on a host whose
// GPUs other jobs hold. Without enough spare capacity it runs on fewer hosts, or none.
namespace {

/// big: 2 hosts × 8 GPUs (b1, b2); small: 4 GPUs on s1; serve: a model server on v1 (8 GPUs);
/// half: an 8-GPU host where `other` holds 4; spare4: 4 free GPUs.
const char* world_yaml = R"(world:
  world: c
  services:
    - {name: model, calls: []}
  hosts:
    - {name: v1, kind: gpu, gpus: 8, services: [model]}
    - {name: b1, kind: gpu, gpus: 8, jobs: [big]}
    - {name: b2, kind: gpu, gpus: 8, jobs: [big]}
    - {name: s1, kind: gpu, gpus: 4, jobs: [small]}
    - {name: half, kind: gpu, gpus: 8, jobs: [other]}
    - {name: spare4, kind: gpu, gpus: 4}
  jobs:
    - {name: big, gpus: 16, hosts: [b1, b2]}
    - {name: small, gpus: 4, hosts: [s1]}
    - {name: other, gpus: 4, hosts: [half]}
)";

std::shared_ptr<sb::world> world_with(const std::string& faults) {
  auto text = std::string{"scenario: c\n"} + world_yaml + "seed: 5\nfaults:\n" + faults +
              "alert: {name: A}\ngoal: g\nexpect: {detected: true}\n";
  auto sc = sb::load_scenario_string(text, "capacity.yaml");
  if (!sc) {
    std::fprintf(stderr, "scenario failed to load: %s\n", sc.error().message.c_str());
    return nullptr;
  }
  return std::make_shared<sb::world>(std::move(*sc));
}

sb::action make(action_kind k, std::string target) {
  sb::action a;
  a.kind = k;
  a.target = std::move(target);
  return a;
}

} // namespace

CAF_TEST(a job moves onto a host with enough free GPUs) {
  auto w = world_with("  - {kind: gpu_xid, target: s1, at: -10m}\n");
  CAF_REQUIRE(w != nullptr);
  CAF_CHECK_EQUAL(m(*w, "small", "stalled"), 1);
  CAF_CHECK(act(*w, make(action_kind::cordon, "s1")));
  CAF_CHECK(act(*w, make(action_kind::restart_job, "small")));
  CAF_CHECK_EQUAL(m(*w, "small", "stalled"), 0);
  CAF_CHECK_GREATER(m(*w, "small", "throughput"), 0.9);
  // The 4 free GPUs of `half` come first in the world's order: shared, not taken from `other`.
  auto hosts = w->apply("again", make(action_kind::restart_job, "small"));
  CAF_REQUIRE(hosts.has_value());
  CAF_CHECK(hosts->find(R"("hosts":["half"])") != std::string::npos);
  CAF_CHECK_EQUAL(m(*w, "other", "stalled"), 0);
}

CAF_TEST(without spare capacity a job runs on fewer hosts) {
  auto w = world_with("  - {kind: gpu_xid, target: b1, at: -10m}\n");
  CAF_REQUIRE(w != nullptr);
  CAF_CHECK_EQUAL(m(*w, "big", "stalled"), 1);
  auto r = make(action_kind::restart_job, "big");
  r.exclude_hosts = {"b1"};
  auto res = w->apply("restart", r);
  CAF_REQUIRE(res.has_value());
  // 8 GPUs per host: the serving host, `half` (4 free) and spare4 (4) do not fit.
  CAF_CHECK(res->find(R"("hosts":["b2"])") != std::string::npos);
  CAF_CHECK_EQUAL(m(*w, "big", "stalled"), 0);
  CAF_CHECK_LESS(m(*w, "big", "throughput"), 0.6); // half of the hosts: partially recovered
  CAF_CHECK_GREATER(m(*w, "big", "throughput"), 0.4);
}

CAF_TEST(jobs moved off one host compete for the same spare GPUs) {
  auto w = world_with("  - {kind: gpu_xid, target: half, at: -10m}\n"
                      "  - {kind: gpu_xid, target: s1, at: -10m}\n");
  CAF_REQUIRE(w != nullptr);
  CAF_CHECK(act(*w, make(action_kind::drain, "s1"))); // small → the 4 free GPUs of half
  CAF_CHECK_EQUAL(m(*w, "small", "stalled"), 1);      // half has an Xid too
  // Draining half moves other (first by name) onto spare4; small then finds no room at all.
  auto res = w->apply("drain-half", make(action_kind::drain, "half"));
  CAF_REQUIRE(res.has_value());
  CAF_CHECK(res->find(R"("jobs":["other","small"])") != std::string::npos);
  CAF_CHECK_EQUAL(m(*w, "other", "stalled"), 0);
  CAF_CHECK_EQUAL(m(*w, "small", "stalled"), 1);
  CAF_CHECK_LESS(m(*w, "small", "throughput"), 0.1);
}
