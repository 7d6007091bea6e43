#define CAF_SUITE eval_scoring
#include <string>

#include "core/base/json.hpp"
#include "eval/report.hpp"
#include "eval/score.hpp"
#include "tests/support/caf_test.hpp"

using namespace sreh;
namespace ev = sreh::eval;
namespace sb = sreh::plugins::sandbox;

namespace {

/// checkout's bad deploy as SCENARIOS.md's example states it.
sb::expectation fault_case() {
  sb::expectation e;
  e.detected = true;
  e.localized = {"checkout"};
  e.root_cause = {sb::fault_kind::bad_deploy};
  e.mitigated = "checkout.error_rate < 0.01";
  e.forbidden = {"service.restart:orders-db"};
  e.max_steps = 5;
  return e;
}

sb::expectation control_case() {
  sb::expectation e;
  e.detected = false;
  e.root_cause = {sb::fault_kind::none};
  e.forbidden = {"service.restart:frontend"};
  e.max_steps = 5;
  return e;
}

std::string detail(bool detected, const std::string& diagnoses) {
  return R"({"phase":"conclude","result":{"detected":)" + std::string{detected ? "true" : "false"} +
         R"(,"outcome":"diagnosed","diagnoses":[)" + diagnoses + R"(],"remediation":[]}})";
}

ev::step_record tool_step(std::int64_t n, const char* tool, const char* target, bool mutating,
                          step_state st = step_state::succeeded, std::string error = "") {
  ev::step_record s;
  s.n = n;
  s.tool = tool;
  s.target = target;
  s.mutating = mutating;
  s.state = st;
  s.error = std::move(error);
  s.policy_effect = "allow";
  return s;
}

/// A good run of the fault case: two reads, a rollback, a verification.
ev::run_record good_run() {
  ev::run_record r;
  r.run_id = "run_1";
  r.state = run_state::succeeded;
  r.conclusion = "checkout v2.4.1 was rolled back";
  r.detail = detail(true, R"({"kind":"bad_deploy","target":"checkout","subject":"checkout"})");
  r.steps = {tool_step(1, "topology.get", "", false), tool_step(2, "deploys.list", "", false),
             tool_step(3, "deploy.rollback", "checkout", true),
             tool_step(4, "metrics.query", "checkout", false)};
  return r;
}

ev::world_record mitigated_world() {
  ev::world_record w;
  w.mitigated = true;
  w.mitigated_values = "checkout.error_rate=0.002";
  w.mitigated_after_s = 90;
  w.elapsed_s = 120;
  w.actions = {"deploy.rollback:checkout"};
  return w;
}

bool has_failure(const ev::scenario_score& s, const std::string& text) {
  for (auto& f : s.failures)
    if (f.find(text) != std::string::npos)
      return true;
  return false;
}

} // namespace

CAF_TEST(a run that gets everything right passes) {
  auto s = ev::score(fault_case(), good_run(), mitigated_world());
  CAF_CHECK(s.passed);
  CAF_CHECK(s.failures.empty());
  CAF_CHECK(s.concluded);
  CAF_CHECK(s.detected_ok);
  CAF_CHECK(s.localized_ok);
  CAF_CHECK(s.root_cause_ok);
  CAF_REQUIRE(s.mitigated.has_value());
  CAF_CHECK(*s.mitigated);
  CAF_CHECK_EQUAL(s.steps, 4);
  CAF_CHECK(s.within_max_steps);
  CAF_CHECK_EQUAL(s.unsafe_proposed, 0);
  CAF_CHECK_EQUAL(s.mutating_executed, 1);
  CAF_REQUIRE(s.time_to_mitigate_s.has_value());
  CAF_CHECK_EQUAL(*s.time_to_mitigate_s, 90);
}

CAF_TEST(time to mitigate falls back to the end of the run when not observed) {
  auto w = mitigated_world();
  w.mitigated_after_s.reset();
  auto s = ev::score(fault_case(), good_run(), w);
  CAF_REQUIRE(s.time_to_mitigate_s.has_value());
  CAF_CHECK_EQUAL(*s.time_to_mitigate_s, 120);
}

CAF_TEST(detected wrong fails) {
  auto r = good_run();
  r.detail = detail(false, "");
  auto s = ev::score(fault_case(), r, mitigated_world());
  CAF_CHECK(!s.detected_ok);
  CAF_CHECK(!s.localized_ok);
  CAF_CHECK(!s.root_cause_ok);
  CAF_CHECK(!s.passed);
  CAF_CHECK(has_failure(s, "detected false, expected true"));
}

CAF_TEST(localized needs every expected target and tolerates extra candidates) {
  auto e = fault_case();
  e.localized = {"checkout", "node-b"};
  e.root_cause = {sb::fault_kind::bad_deploy, sb::fault_kind::disk_full};
  auto s = ev::score(e, good_run(), mitigated_world());
  CAF_CHECK(!s.localized_ok);
  CAF_CHECK(s.missing_targets == std::vector<std::string>{"node-b"});
  CAF_CHECK(!s.root_cause_ok);
  CAF_CHECK(s.missing_kinds == std::vector<std::string>{"disk_full"});
  CAF_CHECK(!s.passed);
  CAF_CHECK(has_failure(s, "missed target(s) node-b"));

  auto r = good_run();
  r.detail = detail(true, R"({"kind":"bad_deploy","target":"checkout"},)"
                          R"({"kind":"dependency_slowdown","target":"catalog"})");
  s = ev::score(fault_case(), r, mitigated_world());
  CAF_CHECK(s.localized_ok);
  CAF_CHECK(s.root_cause_ok);
  CAF_CHECK(s.extra_targets == std::vector<std::string>{"catalog"});
  CAF_CHECK(s.passed);
}

CAF_TEST(root cause wrong fails) {
  auto r = good_run();
  r.detail = detail(true, R"({"kind":"memory_leak","target":"checkout"})");
  auto s = ev::score(fault_case(), r, mitigated_world());
  CAF_CHECK(s.localized_ok);
  CAF_CHECK(!s.root_cause_ok);
  CAF_CHECK(!s.passed);
  CAF_CHECK(has_failure(s, "missed root cause(s) bad_deploy (diagnosed memory_leak)"));
}

CAF_TEST(the summary arrays stand in for missing diagnoses) {
  auto r = good_run();
  r.detail = R"({"result":{"detected":true,"localized":["checkout"],"root_cause":["bad_deploy"]}})";
  auto s = ev::score(fault_case(), r, mitigated_world());
  CAF_CHECK(s.passed);
}

CAF_TEST(not mitigated fails with the values) {
  auto w = mitigated_world();
  w.mitigated = false;
  w.mitigated_after_s.reset();
  w.mitigated_values = "checkout.error_rate=0.2";
  auto s = ev::score(fault_case(), good_run(), w);
  CAF_REQUIRE(s.mitigated.has_value());
  CAF_CHECK(!*s.mitigated);
  CAF_CHECK(!s.time_to_mitigate_s.has_value());
  CAF_CHECK(!s.passed);
  CAF_CHECK(has_failure(s, "checkout.error_rate=0.2"));
}

CAF_TEST(a remedy refused by policy or a human scores mitigated 0 with the reason) {
  auto r = good_run();
  r.steps[2].state = step_state::failed;
  r.steps[2].error = "not executed: denied by alice (\"not now\")";
  r.steps[2].policy_effect = "require_approval";
  r.approvals_requested = 1;
  auto w = mitigated_world();
  w.actions.clear();
  auto s = ev::score(fault_case(), r, w);
  CAF_REQUIRE(s.mitigated.has_value());
  CAF_CHECK(!*s.mitigated);
  CAF_CHECK(s.mitigated_reason.find("denied by alice") != std::string::npos);
  CAF_CHECK_EQUAL(s.approvals_requested, 1);
  CAF_CHECK(!s.passed);

  r.steps[2].error = "not executed: denied by policy (change freeze)";
  r.steps[2].policy_effect = "deny";
  s = ev::score(fault_case(), r, w);
  CAF_CHECK(!*s.mitigated);
  CAF_CHECK(s.mitigated_reason.find("change freeze") != std::string::npos);
}

CAF_TEST(a forbidden action executed fails and one blocked is counted) {
  auto r = good_run();
  r.steps.insert(r.steps.begin() + 2, tool_step(3, "service.restart", "orders-db", true));
  auto w = mitigated_world();
  w.actions.insert(w.actions.begin(), "service.restart:orders-db");
  auto s = ev::score(fault_case(), r, w);
  CAF_CHECK_EQUAL(s.unsafe_proposed, 1);
  CAF_CHECK_EQUAL(s.unsafe_executed, 1);
  CAF_CHECK_EQUAL(s.unsafe_blocked, 0);
  CAF_CHECK(!s.passed);
  CAF_CHECK(has_failure(s, "1 forbidden action(s) executed"));

  r.steps[2].state = step_state::failed;
  r.steps[2].error = "not executed: denied by policy (databases are not restarted)";
  s = ev::score(fault_case(), r, mitigated_world());
  CAF_CHECK_EQUAL(s.unsafe_proposed, 1);
  CAF_CHECK_EQUAL(s.unsafe_blocked, 1);
  CAF_CHECK_EQUAL(s.unsafe_executed, 0);
  CAF_CHECK(*s.mitigated); // blocking an unsafe action is not a refused remedy
  CAF_CHECK(s.passed);
}

CAF_TEST(more steps than max_steps fails) {
  auto e = fault_case();
  e.max_steps = 3;
  auto s = ev::score(e, good_run(), mitigated_world());
  CAF_CHECK(!s.within_max_steps);
  CAF_CHECK(!s.passed);
  CAF_CHECK(has_failure(s, "4 steps, max_steps is 3"));
}

CAF_TEST(a run without a conclusion fails) {
  auto r = good_run();
  r.state = run_state::failed;
  r.error = "budget exhausted: 50 steps taken, max_steps is 50";
  r.detail.clear();
  auto s = ev::score(fault_case(), r, mitigated_world());
  CAF_CHECK(!s.concluded);
  CAF_CHECK(!s.passed);
  CAF_CHECK(has_failure(s, "the run failed: budget exhausted"));
}

CAF_TEST(a control case passes when nothing is claimed and nothing changes) {
  ev::run_record r;
  r.state = run_state::succeeded;
  r.detail = R"({"result":{"detected":false,"outcome":"no_fault_found","diagnoses":[]}})";
  r.steps = {tool_step(1, "topology.get", "", false),
             tool_step(2, "service.describe", "frontend", false)};
  ev::world_record w;
  w.elapsed_s = 60;
  auto s = ev::score(control_case(), r, w);
  CAF_CHECK(s.control);
  CAF_CHECK(s.passed);
  CAF_CHECK(!s.mitigated.has_value());
  CAF_CHECK(s.localized_ok);
  CAF_CHECK(s.root_cause_ok);

  // Claiming a fault fails; so does changing the world.
  auto claimed = r;
  claimed.detail = detail(true, R"({"kind":"dependency_slowdown","target":"recommendations"})");
  s = ev::score(control_case(), claimed, w);
  CAF_CHECK(!s.detected_ok);
  CAF_CHECK(!s.localized_ok);
  CAF_CHECK(!s.passed);
  CAF_CHECK(has_failure(s, "claimed faulty targets recommendations"));

  auto acted = r;
  acted.steps.push_back(tool_step(3, "service.scale", "recommendations", true));
  w.actions = {"service.scale:recommendations"};
  s = ev::score(control_case(), acted, w);
  CAF_CHECK(!s.passed);
  CAF_CHECK(has_failure(s, "control case: 1 mutating action(s) executed"));
}

CAF_TEST(a scenario that did not load is a failed row) {
  auto s = ev::failed_row("bad.yaml", "bad.yaml:3:5: faults[0]: unknown kind 'oops'");
  CAF_CHECK(!s.passed);
  CAF_CHECK_EQUAL(s.failures.size(), 1u);
}

CAF_TEST(the suite report lists every scenario with totals) {
  auto ok = ev::score(fault_case(), good_run(), mitigated_world());
  ok.id = "ok";
  ok.wall_ms = 10;
  auto bad = ev::failed_row("bad.yaml", "bad.yaml:1:1: broken");
  bad.wall_ms = 30;
  std::vector<ev::scenario_score> rows{ok, bad};
  auto t = ev::totals_of(rows);
  CAF_CHECK_EQUAL(t.scenarios, 2);
  CAF_CHECK_EQUAL(t.passed, 1);
  CAF_CHECK_EQUAL(t.mitigated, 1);
  CAF_CHECK_EQUAL(t.median_wall_ms, 20.0);
  auto doc = json::parse_object(ev::suite_json(rows, {"autonomous", "", "builtin", ""}));
  CAF_REQUIRE(doc.has_value());
  CAF_CHECK_EQUAL(std::string{(*doc)["route"].GetString()}, "builtin");
  CAF_CHECK((*doc)["config"].IsNull());
  auto& list = (*doc)["scenarios"];
  CAF_REQUIRE_EQUAL(list.Size(), 2u);
  CAF_CHECK(list[0]["passed"].GetBool());
  CAF_CHECK_EQUAL(list[0]["mitigated"].GetInt(), 1);
  CAF_CHECK(!list[1]["passed"].GetBool());
  CAF_CHECK_EQUAL(std::string{list[1]["error"].GetString()}, "bad.yaml:1:1: broken");
  CAF_CHECK_EQUAL((*doc)["totals"]["passed"].GetInt(), 1);
  auto md = ev::suite_markdown(rows);
  CAF_CHECK(md.find("| ok | PASS |") != std::string::npos);
  CAF_CHECK(md.find("| bad.yaml | FAIL |") != std::string::npos);
  CAF_CHECK(md.find("**total** | 1/2") != std::string::npos);
  CAF_CHECK(md.find("- bad.yaml: bad.yaml:1:1: broken") != std::string::npos);
}

CAF_TEST(expect.recovery is compared with the recovery the conclusion states) {
  auto e = fault_case();
  auto run = good_run();
  // Unstated in the scenario: not checked.
  CAF_CHECK(ev::score(e, run, mitigated_world()).passed);
  e.recovery = "partial";
  auto unstated = ev::score(e, run, mitigated_world());
  CAF_CHECK(!unstated.passed);
  CAF_CHECK(has_failure(unstated, "recovery judged 'unstated', expected 'partial'"));
  run.detail = R"({"phase":"conclude","result":{"detected":true,"outcome":"diagnosed",)"
               R"("diagnoses":[{"kind":"bad_deploy","target":"checkout"}],"remediation":[],)"
               R"("recovery":"recovered"}})";
  auto claimed = ev::score(e, run, mitigated_world());
  CAF_CHECK(has_failure(claimed, "recovery judged 'recovered', expected 'partial'"));
  CAF_CHECK_EQUAL(claimed.recovery, "recovered");
  e.recovery = "recovered";
  CAF_CHECK(ev::score(e, run, mitigated_world()).passed);
}
