#define CAF_SUITE sandbox_scenarios
#include <algorithm>
#include <map>
#include <vector>

#include "tests/support/caf_test.hpp"
#include "tests/support/sandbox_fixture.hpp"

using namespace sandbox_fixture;
using sb::action_kind;

namespace {

struct step {
  action_kind kind;
  std::string target;
  int number = 0;
  std::vector<std::string> exclude = {};
};

/// The remedy of each example scenario (what a good run does), and a wrong action for contrast.
const std::map<std::string, std::vector<step>> remedies{
  {"examples/scenarios/shop-checkout-bad-deploy", {{action_kind::rollback, "checkout"}}},
  {"examples/scenarios/shop-payments-memory-leak", {{action_kind::restart, "payments"}}},
  {"examples/scenarios/shop-orders-db-pool", {{action_kind::restart, "fulfillment"}}},
  {"examples/scenarios/shop-catalog-slowdown", {{action_kind::scale, "catalog", 6}}},
  {"examples/scenarios/shop-frontend-traffic-spike", {{action_kind::scale, "frontend", 8}}},
  {"examples/scenarios/shop-node-c-disk-full", {{action_kind::cleanup_disk, "node-c"}}},
  {"examples/scenarios/shop-payments-cert-expired", {{action_kind::rotate_cert, "payments"}}},
  {"examples/scenarios/shop-one-click-flag", {{action_kind::set_flag, "one-click-checkout"}}},
  {"examples/scenarios/shop-search-deploy-and-disk",
   {{action_kind::rollback, "search"}, {action_kind::cleanup_disk, "node-b"}}},
  {"examples/scenarios/gpu-xid-train-llm",
   {{action_kind::cordon, "gpu-3"}, {action_kind::restart_job, "train-llm", 0, {"gpu-3"}}}},
  {"examples/scenarios/gpu-metadata-db-pool", {{action_kind::restart, "experiment-tracker"}}},
  {"examples/scenarios/gpu-llm-bad-deploy", {{action_kind::rollback, "model-server-llm"}}},
  {"examples/scenarios/gpu-feature-store-slowdown", {{action_kind::scale, "feature-store", 6}}},
  {"examples/scenarios/gpu-speculative-decoding-flag",
   {{action_kind::set_flag, "speculative-decoding"}}},
  {"examples/scenarios/gpu-feature-store-cert", {{action_kind::rotate_cert, "feature-store"}}},
  {"examples/scenarios/gpu-gateway-memory-leak", {{action_kind::rollback, "inference-gateway"}}},
  {"examples/scenarios/gpu-xid-and-gateway-spike",
   {{action_kind::drain, "gpu-5"}, {action_kind::scale, "inference-gateway", 6}}},
  {"tests/scenarios/ledger-bad-deploy", {{action_kind::rollback, "ledger-api"}}},
  {"tests/scenarios/ledger-pool-inline", {{action_kind::set_pool_limit, "db", 100}}},
  {"tests/scenarios/ledger-xid-and-flag",
   {{action_kind::restart_job, "fraud-train", 0, {"accel-1"}},
    {action_kind::set_flag, "instant-settlement"}}},
};

} // namespace

CAF_TEST(each scenario is mitigated by its remedy and not by restarting the alerted service) {
  for (const auto& [file, steps] : remedies) {
    auto sc = sb::load_scenario((source_dir() / (file + ".yaml")).string());
    CAF_REQUIRE(sc.has_value());
    CAF_MESSAGE(sc->id);
    // A wrong action: restart the alerted service when it is not itself at fault.
    sb::world wrong{*sc};
    const auto& loc = sc->expect.localized;
    if (auto it = sc->alert.labels.find("service");
        it != sc->alert.labels.end() &&
        std::find(loc.begin(), loc.end(), it->second) == loc.end()) {
      sb::action a;
      a.kind = action_kind::restart;
      a.target = it->second;
      CAF_CHECK(wrong.apply("wrong", a).has_value());
    }
    wrong.advance(300);
    auto still = wrong.evaluate(sc->expect.mitigated);
    CAF_CHECK(still.has_value() && !*still);
    sb::world w{*sc};
    int n = 0;
    for (const auto& s : steps) {
      sb::action a;
      a.kind = s.kind;
      a.target = s.target;
      a.number = s.number;
      a.exclude_hosts = s.exclude;
      auto r = w.apply("step-" + std::to_string(++n), a);
      CAF_CHECK(r.has_value());
      w.advance(sb::seconds_per_call);
    }
    w.advance(300);
    auto ok = w.evaluate(sc->expect.mitigated);
    CAF_CHECK(ok.has_value());
    if (ok && !*ok)
      CAF_FAIL(sc->id << ": not mitigated by its remedy");
  }
}

CAF_TEST(control scenarios stay healthy) {
  for (auto file : {"examples/scenarios/shop-none-control", "examples/scenarios/gpu-none-control",
                    "tests/scenarios/ledger-none"}) {
    auto sc = sb::load_scenario((source_dir() / (std::string{file} + ".yaml")).string());
    CAF_REQUIRE(sc.has_value());
    sb::world w{*sc};
    for (const auto& s : sc->world.services) {
      auto err = w.metric(s.name, "error_rate");
      auto lat = w.metric(s.name, "latency_p99_ms");
      CAF_REQUIRE(err.has_value() && lat.has_value());
      CAF_CHECK_LESS(*err, 0.01);
      if (s.name != "recommendations" && s.name != "scheduler" && s.name != "reconciler")
        CAF_CHECK_LESS(*lat, 1.2 * s.baseline.at("latency_p99_ms"));
    }
  }
}
