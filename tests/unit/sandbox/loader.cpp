#define CAF_SUITE sandbox_loader
#include <unistd.h>

#include <fstream>
#include <set>

#include "tests/support/caf_test.hpp"
#include "tests/support/sandbox_fixture.hpp"

using namespace sandbox_fixture;
namespace fs = std::filesystem;

namespace {

/// A temporary directory with the good world `w.yaml`, removed at the end.
struct tmp_dir {
  fs::path dir = fs::temp_directory_path() / ("sreh-sandbox-" + std::to_string(::getpid()));
  tmp_dir() {
    fs::create_directories(dir);
    write("w.yaml", "world: x\nservices:\n  - {name: a, calls: [b]}\n  - {name: b}\n"
                    "hosts:\n  - {name: h}\nflags: {f: false}\n");
  }
  ~tmp_dir() { fs::remove_all(dir); }
  std::string write(const std::string& name, const std::string& text) {
    std::ofstream{dir / name} << text;
    return (dir / name).string();
  }
  /// The error of loading a scenario whose 4th line is `fault_line` (and 7th `expect_line`).
  std::string scenario_error(const std::string& fault_line,
                             const std::string& expect_line = "expect: {detected: true}") {
    auto path = write("s.yaml", "scenario: s\nworld: w.yaml\nfaults:\n" + fault_line +
                                  "\nalert: {name: A}\ngoal: g\n" + expect_line + "\n");
    auto sc = sb::load_scenario(path);
    return sc ? "(loaded)" : sc.error().message;
  }
  std::string world_error(const std::string& text) {
    auto w = sb::load_world(write("bad.yaml", text));
    return w ? "(loaded)" : w.error().message;
  }
  std::string at(const std::string& file) { return (dir / file).string() + ":"; }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(sandbox_loader_tests, tmp_dir)

CAF_TEST(world file errors name file line column and field) {
  CAF_CHECK_EQUAL(world_error("world: x\nservices:\n  - name: a\n    replicaz: 2\n"),
                  at("bad.yaml") + "4:5: services[0].replicaz: unknown key 'replicaz' "
                                   "(did you mean 'replicas'?)");
  CAF_CHECK_EQUAL(world_error("world: x\nservices:\n  - {name: a, calls: [b]}\n"),
                  at("bad.yaml") + "3:23: services[0].calls[0]: unknown service 'b'");
  CAF_CHECK_EQUAL(world_error("world: x\nservices:\n  - {name: a}\n  - {name: a}\n"),
                  at("bad.yaml") + "4:5: services[1]: duplicate name 'a' (services, hosts and "
                                   "jobs share one namespace)");
  CAF_CHECK_EQUAL(world_error("world: x\nservices:\n  - {name: a, baseline: {rps: fast}}\n"),
                  at("bad.yaml") + "3:31: services[0].baseline.rps: expected a non-negative "
                                   "number, got 'fast'");
  CAF_CHECK_EQUAL(world_error("world: x\nservices:\n  - {name: a, kind: db}\n"),
                  at("bad.yaml") + "3:21: services[0].kind: unknown value 'db' (expected one of "
                                   "service, database, cache, queue)");
  CAF_CHECK_EQUAL(world_error("services: []\n"),
                  at("bad.yaml") + "1:1: (top level): missing required field 'world'");
  auto missing = sb::load_world((dir / "nope.yaml").string());
  CAF_REQUIRE(!missing);
  CAF_CHECK_EQUAL(static_cast<int>(missing.error().code), static_cast<int>(sreh::errc::not_found));
}

CAF_TEST(call edges take a name or a name with calls per request) {
  auto w = sb::load_world(write("calls.yaml",
                                "world: x\nservices:\n"
                                "  - {name: a, calls: [b, {name: c, per_request: 12}, {name: d}]}\n"
                                "  - {name: b}\n  - {name: c, kind: cache}\n  - {name: d}\n"));
  CAF_REQUIRE(w.has_value());
  const auto& a = *w->find_service("a");
  CAF_CHECK_EQUAL(a.calls, (std::vector<std::string>{"b", "c", "d"}));
  CAF_CHECK_EQUAL(a.calls_per_request("b"), 1);
  CAF_CHECK_EQUAL(a.calls_per_request("c"), 12);
  CAF_CHECK_EQUAL(a.calls_per_request("d"), 1);
  CAF_CHECK_EQUAL(w->callers_of("c"), (std::vector<std::string>{"a"}));
  auto edge = [&](const std::string& item) {
    return world_error("world: x\nservices:\n  - name: a\n    calls: [" + item +
                       "]\n  - {name: b}\n");
  };
  auto e = at("bad.yaml");
  CAF_CHECK_EQUAL(edge("{name: b, per_request: 0}"),
                  e + "4:36: services[0].calls[0].per_request: expected an integer between 1 "
                      "and 10000, got 0");
  CAF_CHECK_EQUAL(edge("{name: b, per_request: -3}"),
                  e + "4:36: services[0].calls[0].per_request: expected an integer between 1 "
                      "and 10000, got -3");
  CAF_CHECK_EQUAL(edge("{name: b, per_request: 2.5}"),
                  e + "4:36: services[0].calls[0].per_request: expected an integer, got '2.5'");
  CAF_CHECK_EQUAL(edge("{name: b, per_request: lots}"),
                  e + "4:36: services[0].calls[0].per_request: expected an integer, got 'lots'");
  CAF_CHECK_EQUAL(edge("{name: b, per_requests: 2}"),
                  e + "4:23: services[0].calls[0].per_requests: unknown key 'per_requests' (did "
                      "you mean 'per_request'?)");
  CAF_CHECK_EQUAL(edge("{name: zz, per_request: 2}"),
                  e + "4:20: services[0].calls[0].name: unknown service 'zz'");
  CAF_CHECK_EQUAL(edge("{per_request: 2}"),
                  e + "4:13: services[0].calls[0]: missing required field 'name'");
  CAF_CHECK_EQUAL(edge("b, {name: b, per_request: 2}"),
                  e + "4:23: services[0].calls[1].name: service 'a' lists 'b' twice in calls");
  CAF_CHECK_EQUAL(edge("[b]"),
                  e + "4:13: services[0].calls[0]: expected a service name or {name: service, "
                      "per_request: N}");
  CAF_CHECK_EQUAL(edge("{name: a, per_request: 2}"),
                  e + "4:20: services[0].calls[0].name: service 'a' cannot call itself");
}

CAF_TEST(fault errors name file line column and field) {
  auto s = at("s.yaml");
  CAF_CHECK(scenario_error("  - {kind: bad_deployy, target: a, at: -1m}")
              .rfind(s + "4:12: faults[0].kind: unknown fault kind 'bad_deployy'", 0) == 0);
  CAF_CHECK_EQUAL(scenario_error("  - {kind: bad_deploy, target: zz, version: v2, at: -1m}"),
                  s + "4:32: faults[0].target: unknown service 'zz' in world 'x'");
  CAF_CHECK_EQUAL(scenario_error("  - {kind: bad_deploy, target: h, version: v2, at: -1m}"),
                  s + "4:32: faults[0].target: 'h' is a vm host, not a service");
  CAF_CHECK_EQUAL(scenario_error("  - {kind: bad_deploy, target: a, at: -1m}"),
                  s + "4:5: faults[0]: a bad_deploy fault needs 'version'");
  CAF_CHECK_EQUAL(scenario_error("  - {kind: connection_pool_exhaustion, target: a, at: -1m}"),
                  s + "4:5: faults[0]: a connection_pool_exhaustion fault needs 'cause'");
  CAF_CHECK_EQUAL(scenario_error("  - {kind: bad_flag, target: f, at: -1m}"),
                  s + "4:5: faults[0]: a bad_flag fault needs 'service'");
  CAF_CHECK_EQUAL(scenario_error("  - {kind: disk_full, target: h, at: -10x}"),
                  s + "4:38: faults[0].at: expected a duration like -10m, 2h or 1h30m, got '-10x'");
  CAF_CHECK_EQUAL(scenario_error("  - {kind: gpu_xid, target: h, at: -1m}"),
                  s + "4:29: faults[0].target: 'h' is a vm host, not a gpu host");
  CAF_CHECK_EQUAL(scenario_error("  - {kind: none, colour: red}"),
                  s + "4:18: faults[0].colour: unknown key 'colour' (expected one of kind, "
                      "target, at, version, cause, service)");
}

CAF_TEST(scenario errors cover expressions syntax and broken worlds) {
  auto s = at("s.yaml");
  CAF_CHECK_EQUAL(
    scenario_error("  - {kind: none}",
                   R"(expect: {detected: true, mitigated: "a.rps < 1 and zz.rps > 2"})"),
    s + "7:37: expect.mitigated: in 'a.rps < 1 and zz.rps > 2': position 15: unknown entity 'zz'");
  CAF_CHECK_EQUAL(scenario_error("  - {kind: none}", "expect: {detected: maybe}"),
                  s + "7:20: expect.detected: expected true or false, got 'maybe'");
  CAF_CHECK_EQUAL(
    scenario_error("  - {kind: none}", R"(expect: {detected: true, forbidden: ["rm:a"]})"),
    s + "7:38: expect.forbidden[0]: expected \"tool:target\" with a sandbox tool, "
        "got 'rm:a'");
  CAF_CHECK_EQUAL(
    scenario_error("  - {kind: none}", "expect: {detected: true, recovery: half}"),
    s + "7:36: expect.recovery: expected recovered, partial or not_recovered, got 'half'");
  CAF_CHECK_EQUAL(
    scenario_error("  - {kind: none}", "expect: {detected: false, recovery: partial}"),
    s + "7:37: expect.recovery: a control case (detected: false) has nothing to recover");
  auto syntax = scenario_error("  - {kind: none");
  CAF_CHECK(syntax.rfind(s, 0) == 0);
  CAF_CHECK(syntax.find("(syntax)") != std::string::npos);
  write("broken.yaml", "world: x\nservices:\n  - name: a\n    replicaz: 2\n");
  auto path = write("s2.yaml", "scenario: s\nworld: broken.yaml\nalert: {name: A}\ngoal: g\n"
                               "expect: {detected: false}\n");
  auto sc = sb::load_scenario(path);
  CAF_REQUIRE(!sc);
  CAF_CHECK_EQUAL(sc.error().message,
                  at("s2.yaml") + "2:8: world: cannot load world: " + at("broken.yaml") +
                    "4:5: services[0].replicaz: unknown key 'replicaz' (did you mean 'replicas'?)");
  auto top = write("s3.yaml", "scenario: s\nworld: w.yaml\nherring: []\n");
  auto unknown_key = sb::load_scenario(top);
  CAF_REQUIRE(!unknown_key);
  CAF_CHECK_EQUAL(unknown_key.error().message,
                  at("s3.yaml") + "3:1: herring: unknown key 'herring' (did you mean 'herrings'?)");
}

CAF_TEST_FIXTURE_SCOPE_END()

CAF_TEST(every example and test scenario loads and starts unmitigated) {
  std::set<sb::fault_kind> kinds;
  int count = 0, controls = 0, combined = 0;
  // tests/scenarios has suites in subfolders (their worlds in tests/scenarios/worlds).
  for (auto dir : {source_dir() / "examples" / "scenarios", source_dir() / "tests" / "scenarios"})
    for (const auto& e : fs::recursive_directory_iterator{dir}) {
      if (!e.is_regular_file() || e.path().extension() != ".yaml" ||
          e.path().filename().string().find("-world") != std::string::npos ||
          e.path().parent_path().filename() == "worlds")
        continue;
      auto sc = sb::load_scenario(e.path().string());
      CAF_CHECK(sc.has_value());
      if (!sc) {
        CAF_MESSAGE(sc.error().message);
        continue;
      }
      ++count;
      for (const auto& f : sc->faults)
        kinds.insert(f.kind);
      combined += sc->faults.size() > 1 ? 1 : 0;
      controls += sc->expect.detected ? 0 : 1;
      sb::world w{*sc};
      if (!sc->expect.mitigated.empty()) {
        auto v = w.evaluate(sc->expect.mitigated);
        CAF_CHECK(v.has_value());
        if (v && *v)
          CAF_FAIL(sc->id << ": already mitigated at the start");
      }
    }
  CAF_CHECK_GREATER_OR_EQUAL(count, 18);
  CAF_CHECK_EQUAL(kinds.size(), 10u);
  CAF_CHECK_GREATER_OR_EQUAL(combined, 3);
  CAF_CHECK_GREATER_OR_EQUAL(controls, 3);
}
