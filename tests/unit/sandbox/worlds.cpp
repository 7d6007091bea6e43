#define CAF_SUITE sandbox_worlds
#include <algorithm>
#include <map>
#include <vector>

#include "tests/support/caf_test.hpp"
#include "tests/support/sandbox_fixture.hpp"

// The suites over the travel and ml-platform worlds (tests/scenarios/{travel,ml-platform}) are
// solvable in principle: each world shows its faults' symptoms and the alert's, a wrong action
// does not mitigate, and the remedies of SCENARIOS.md make `mitigated` hold.
using namespace sandbox_fixture;
using sb::action_kind;
namespace fs = std::filesystem;

namespace {

struct step {
  action_kind kind;
  std::string target;
  int number = 0;
};

const std::map<std::string, std::vector<step>> remedies{
  {"travel-data1-disk-full", {{action_kind::cleanup_disk, "data-1"}}},
  {"travel-availability-leak-slow-search", {{action_kind::rollback, "availability"}}},
  {"travel-data2-disk-and-edge-spike",
   {{action_kind::cleanup_disk, "data-2"}, {action_kind::scale, "edge-gateway", 7}}},
  {"travel-pricing-bad-deploy", {{action_kind::rollback, "pricing"}}},
  {"travel-inventory-db-pool", {{action_kind::restart, "reporting"}}},
  {"travel-avail-cache-slowdown", {{action_kind::scale, "avail-cache", 3}}},
  {"travel-feature-cache-slowdown", {{action_kind::scale, "feature-cache", 3}}},
  {"travel-booking-traffic-spike", {{action_kind::scale, "booking-api", 5}}},
  {"travel-profile-cert-expired", {{action_kind::rotate_cert, "profile"}}},
  {"travel-instant-book-flag", {{action_kind::set_flag, "instant-book"}}},
  {"travel-flag-and-cert",
   {{action_kind::set_flag, "dynamic-pricing"}, {action_kind::rotate_cert, "ranker"}}},
  {"travel-two-branches", {{action_kind::rollback, "profile"}, {action_kind::rollback, "ranker"}}},
  {"travel-app1-disk-and-search-deploy",
   {{action_kind::cleanup_disk, "app-1"}, {action_kind::rollback, "search-api"}}},
  {"travel-rates-db-slowdown-herrings", {{action_kind::scale, "rates-db", 2}}},
  {"travel-profile-leak-slow-booking", {{action_kind::rollback, "profile"}}},
  {"travel-none-control", {}},
  {"ml-xid-embed-refresh-spare",
   {{action_kind::cordon, "gpu-t6"}, {action_kind::restart_job, "embed-refresh"}}},
  {"ml-xid-pretrain-no-spare",
   {{action_kind::cordon, "gpu-t3"}, {action_kind::restart_job, "pretrain-70b"}}},
  {"ml-xid-serving-host", {{action_kind::drain, "gpu-s1"}}},
  {"ml-store1-disk-full", {{action_kind::cleanup_disk, "store-1"}}},
  {"ml-prompt-cache-slowdown", {{action_kind::scale, "prompt-cache", 3}}},
  {"ml-llm-bad-deploy", {{action_kind::rollback, "llm-serving"}}},
  {"ml-meta-db-pool", {{action_kind::restart, "experiment-ui"}}},
  {"ml-safety-filter-leak-slow-siblings", {{action_kind::rollback, "safety-filter"}}},
  {"ml-edge-traffic-spike", {{action_kind::scale, "edge-api", 5}}},
  {"ml-auth-cert-expired", {{action_kind::rotate_cert, "auth"}}},
  {"ml-flag-and-cert",
   {{action_kind::set_flag, "streaming-responses"}, {action_kind::rotate_cert, "vector-db"}}},
  {"ml-xid-and-edge-spike",
   {{action_kind::cordon, "gpu-t1"},
    {action_kind::restart_job, "pretrain-70b"},
    {action_kind::scale, "edge-api", 5}}},
  {"ml-two-branches",
   {{action_kind::rollback, "safety-filter"}, {action_kind::rollback, "embed-serving"}}},
  {"ml-store2-disk-and-safety-flag",
   {{action_kind::cleanup_disk, "store-2"}, {action_kind::set_flag, "safety-v2"}}},
  {"ml-none-control", {}},
};

/// Other remedies SCENARIOS.md lists for the same faults: `mitigated` must accept them too.
const std::map<std::string, std::vector<std::vector<step>>> alternatives{
  {"travel-availability-leak-slow-search", {{{action_kind::restart, "availability"}}}},
  {"travel-profile-leak-slow-booking", {{{action_kind::restart, "profile"}}}},
  {"travel-inventory-db-pool",
   {{{action_kind::set_pool_limit, "inventory-db", 600}}, {{action_kind::scale, "reporting", 2}}}},
  {"ml-meta-db-pool", {{{action_kind::set_pool_limit, "meta-db", 300}}}},
  {"ml-safety-filter-leak-slow-siblings", {{{action_kind::restart, "safety-filter"}}}},
  {"ml-two-branches",
   {{{action_kind::rollback, "safety-filter"}, {action_kind::restart, "embed-serving"}}}},
  {"ml-xid-embed-refresh-spare", {{{action_kind::drain, "gpu-t6"}}}},
  {"ml-xid-pretrain-no-spare", {{{action_kind::drain, "gpu-t3"}}}},
};

/// Actions that look like a remedy but are none: `mitigated` must stay false after them.
const std::map<std::string, std::vector<step>> not_remedies{
  {"ml-xid-serving-host", {{action_kind::cordon, "gpu-s1"}}}, // its replicas keep running there
  {"ml-xid-embed-refresh-spare", {{action_kind::restart_job, "embed-refresh"}}}, // back on gpu-t6
  {"travel-inventory-db-pool", {{action_kind::restart, "inventory-db"}}}, // refills in minutes
  {"travel-data1-disk-full", {{action_kind::cleanup_disk, "data-2"}}},    // the wrong host
};

/// Applies `steps` one tool call apart, then lets five minutes pass; false (with a failure) when
/// an action is refused.
bool run_steps(sb::world& w, const std::string& id, const std::vector<step>& steps) {
  int n = 0;
  for (const auto& s : steps) {
    sb::action a;
    a.kind = s.kind;
    a.target = s.target;
    a.number = s.number;
    auto r = w.apply("step-" + std::to_string(++n), a);
    if (!r) {
      CAF_FAIL(id << ": " << sb::tool_name(s.kind) << " " << s.target << ": " << r.error().message);
      return false;
    }
    w.advance(sb::seconds_per_call);
  }
  w.advance(300);
  return true;
}

/// What must hold after the remedies besides `mitigated`: capacity that is or is not there.
const std::map<std::string, std::string> after_remedy{
  {"ml-xid-embed-refresh-spare", "embed-refresh.throughput > 0.9"}, // spare gpu-t7 fits
  {"ml-xid-pretrain-no-spare", "pretrain-70b.throughput < 0.8"},    // 3 of 4 hosts: partial
  {"ml-xid-and-edge-spike", "pretrain-70b.throughput < 0.8"},
};

std::vector<fs::path> suite_files() {
  std::vector<fs::path> out;
  for (auto dir : {"travel", "ml-platform"})
    for (const auto& e : fs::directory_iterator{source_dir() / "tests" / "scenarios" / dir})
      if (e.path().extension() == ".yaml")
        out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

double baseline(const sb::scenario& sc, const std::string& entity, const char* metric) {
  const auto* s = sc.world.find_service(entity);
  return s != nullptr ? s->baseline.at(metric) : 0;
}

/// The symptom SCENARIOS.md gives each fault kind, on the world at the start.
bool shows(const sb::world& w, const sb::fault& f) {
  const auto& sc = w.spec();
  const auto& t = f.target;
  switch (f.kind) {
  case sb::fault_kind::bad_deploy:
    return m(w, t.c_str(), "error_rate") > 0.1;
  case sb::fault_kind::memory_leak:
    return m(w, t.c_str(), "memory") > 0.85 && m(w, t.c_str(), "restarts") > 0;
  case sb::fault_kind::connection_pool_exhaustion:
    return m(w, t.c_str(), "connections") >= sc.world.find_service(t)->max_connections;
  case sb::fault_kind::dependency_slowdown:
    return m(w, t.c_str(), "latency_p99_ms") > 4 * baseline(sc, t, "latency_p99_ms");
  case sb::fault_kind::traffic_spike:
    return m(w, t.c_str(), "rps") > 2 * baseline(sc, t, "rps");
  case sb::fault_kind::disk_full:
    return m(w, t.c_str(), "disk_used") >= 0.98;
  case sb::fault_kind::cert_expired: {
    auto callers = sc.world.callers_of(t);
    return std::any_of(callers.begin(), callers.end(),
                       [&](const std::string& c) { return m(w, c.c_str(), "error_rate") > 0.1; });
  }
  case sb::fault_kind::bad_flag:
    return m(w, f.service.c_str(), "error_rate") > 0.1;
  case sb::fault_kind::gpu_xid:
    return m(w, t.c_str(), "xid_errors") > 0;
  case sb::fault_kind::none:
    return true;
  }
  return false;
}

/// Is the alerted service (or job) visibly off its baseline?
bool alert_shows(const sb::world& w) {
  const auto& sc = w.spec();
  const auto& labels = sc.alert.labels;
  if (auto it = labels.find("job"); it != labels.end())
    return m(w, it->second.c_str(), "stalled") == 1;
  auto it = labels.find("service");
  if (it == labels.end())
    return false;
  const auto& s = it->second;
  return m(w, s.c_str(), "error_rate") > 3 * baseline(sc, s, "error_rate") + 0.005 ||
         m(w, s.c_str(), "latency_p99_ms") > 1.15 * baseline(sc, s, "latency_p99_ms");
}

bool is_slow_herring(const sb::scenario& sc, const std::string& name) {
  return std::any_of(sc.herrings.begin(), sc.herrings.end(), [&](const sb::herring& h) {
    return h.kind == sb::herring_kind::slow && h.target == name;
  });
}

} // namespace

CAF_TEST(every scenario of the two suites has a remedy here) {
  auto files = suite_files();
  CAF_CHECK_GREATER_OR_EQUAL(files.size(), 24u);
  for (const auto& f : files) {
    auto sc = sb::load_scenario(f.string());
    CAF_REQUIRE(sc.has_value());
    if (remedies.count(sc->id) == 0)
      CAF_FAIL(sc->id << ": no remedy listed in tests/unit/sandbox/worlds.cpp");
  }
  CAF_CHECK_EQUAL(remedies.size(), files.size());
}

CAF_TEST(each world shows its faults and the alert) {
  for (const auto& f : suite_files()) {
    auto sc = sb::load_scenario(f.string());
    CAF_REQUIRE(sc.has_value());
    CAF_MESSAGE(sc->id);
    sb::world w{*sc};
    for (const auto& fault : sc->faults)
      if (!shows(w, fault))
        CAF_FAIL(sc->id << ": " << sb::to_string(fault.kind) << " on " << fault.target
                        << " shows no symptom");
    if (!sc->expect.detected) {
      // Control: every service near its baseline but the slow herrings.
      for (const auto& s : sc->world.services) {
        CAF_CHECK_LESS(m(w, s.name.c_str(), "error_rate"), 0.01);
        if (!is_slow_herring(*sc, s.name))
          CAF_CHECK_LESS(m(w, s.name.c_str(), "latency_p99_ms"),
                         1.15 * s.baseline.at("latency_p99_ms"));
      }
      continue;
    }
    if (!alert_shows(w))
      CAF_FAIL(sc->id << ": the alerted entity looks healthy");
    auto v = w.evaluate(sc->expect.mitigated);
    CAF_REQUIRE(v.has_value());
    if (*v)
      CAF_FAIL(sc->id << ": already mitigated at the start");
  }
}

CAF_TEST(each scenario is mitigated by its remedy and not by restarting the alerted service) {
  for (const auto& f : suite_files()) {
    auto sc = sb::load_scenario(f.string());
    CAF_REQUIRE(sc.has_value());
    if (sc->expect.mitigated.empty())
      continue;
    CAF_MESSAGE(sc->id);
    sb::world wrong{*sc};
    const auto& loc = sc->expect.localized;
    auto alerted = sc->alert.labels.find("service");
    if (alerted != sc->alert.labels.end() &&
        std::find(loc.begin(), loc.end(), alerted->second) == loc.end()) {
      sb::action a;
      a.kind = action_kind::restart;
      a.target = alerted->second;
      CAF_CHECK(wrong.apply("wrong", a).has_value());
    }
    wrong.advance(300);
    auto still = wrong.evaluate(sc->expect.mitigated);
    CAF_CHECK(still.has_value() && !*still);
    sb::world w{*sc};
    if (!run_steps(w, sc->id, remedies.at(sc->id)))
      continue;
    auto ok = w.evaluate(sc->expect.mitigated);
    CAF_REQUIRE(ok.has_value());
    if (!*ok)
      CAF_FAIL(sc->id << ": not mitigated by its remedy");
    if (auto it = after_remedy.find(sc->id); it != after_remedy.end()) {
      auto extra = w.evaluate(it->second);
      CAF_REQUIRE(extra.has_value());
      if (!*extra)
        CAF_FAIL(sc->id << ": after the remedy, not " << it->second);
    }
  }
}

CAF_TEST(the other remedies of a fault work too and the false ones do not ) {
  for (const auto& f : suite_files()) {
    auto sc = sb::load_scenario(f.string());
    CAF_REQUIRE(sc.has_value());
    if (auto it = alternatives.find(sc->id); it != alternatives.end())
      for (const auto& steps : it->second) {
        sb::world w{*sc};
        if (!run_steps(w, sc->id, steps))
          continue;
        auto ok = w.evaluate(sc->expect.mitigated);
        CAF_REQUIRE(ok.has_value());
        if (!*ok)
          CAF_FAIL(sc->id << ": not mitigated by " << sb::tool_name(steps.front().kind) << " "
                          << steps.front().target);
      }
    if (auto it = not_remedies.find(sc->id); it != not_remedies.end()) {
      sb::world w{*sc};
      if (!run_steps(w, sc->id, it->second))
        continue;
      auto v = w.evaluate(sc->expect.mitigated);
      CAF_REQUIRE(v.has_value());
      if (*v)
        CAF_FAIL(sc->id << ": mitigated by " << sb::tool_name(it->second.front().kind) << " "
                        << it->second.front().target << ", which is no remedy");
    }
  }
  CAF_CHECK_EQUAL(alternatives.size(), 8u);
}

CAF_TEST(a remedy on one fault of a combined scenario is not enough) {
  for (const auto& f : suite_files()) {
    auto sc = sb::load_scenario(f.string());
    CAF_REQUIRE(sc.has_value());
    const auto& steps = remedies.at(sc->id);
    if (sc->faults.size() < 2)
      continue;
    CAF_MESSAGE(sc->id);
    // Only the last step (the other fault's remedies stay undone).
    sb::world w{*sc};
    sb::action a;
    a.kind = steps.back().kind;
    a.target = steps.back().target;
    a.number = steps.back().number;
    CAF_CHECK(w.apply("only-last", a).has_value());
    w.advance(300);
    auto v = w.evaluate(sc->expect.mitigated);
    CAF_REQUIRE(v.has_value());
    if (*v)
      CAF_FAIL(sc->id << ": mitigated by one remedy alone");
  }
}
