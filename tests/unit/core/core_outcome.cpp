// What a run achieved beside how it ended (core/model/outcome.hpp).
#define CAF_SUITE core_outcome
#include <caf/test/unit_test.hpp>

#include <string>
#include <vector>

#include "core/model/outcome.hpp"

using namespace sreh;

namespace {

step tool_step(std::int64_t n, std::string tool, step_state st, std::string result = "{}") {
  step s;
  s.n = n;
  s.kind = step_kind::tool;
  s.tool = std::move(tool);
  s.state = st;
  s.result = std::move(result);
  return s;
}

step check_step(std::int64_t n, bool holds) {
  step s;
  s.n = n;
  s.kind = step_kind::observe;
  s.state = step_state::succeeded;
  s.result = holds ? R"({"holds":true})" : R"({"holds":false})";
  return s;
}

step conclusion(std::int64_t n, std::string result) {
  step s;
  s.n = n;
  s.kind = step_kind::conclude;
  s.state = step_state::succeeded;
  s.decision = R"({"thought":"t","detail":{"result":)" + result + "}}";
  return s;
}

const outcome::mutating_fn mutating = [](std::string_view tool) {
  return tool == "deploy.rollback";
};

const std::string denied_result = R"({"not_executed":"denied","retryable":false})";

} // namespace

CAF_TEST(the stated recovery of a reasoner decides) {
  std::vector<step> steps{tool_step(1, "service.describe", step_state::succeeded),
                          tool_step(2, "deploy.rollback", step_state::succeeded),
                          conclusion(3, R"({"outcome":"diagnosed","recovery":"recovered"})")};
  CAF_CHECK_EQUAL(outcome::of_run("goal", run_state::succeeded, steps, mutating), "mitigated");
  steps.back() = conclusion(3, R"({"outcome":"diagnosed","recovery":"not_recovered"})");
  CAF_CHECK_EQUAL(outcome::of_run("goal", run_state::succeeded, steps, mutating), "not_mitigated");
  steps.back() = conclusion(3, R"({"outcome":"diagnosed","recovery":"partial"})");
  CAF_CHECK_EQUAL(outcome::of_run("goal", run_state::succeeded, steps, mutating), "partial");
  steps.back() = conclusion(3, R"({"outcome":"no_fault_found","recovery":"none"})");
  CAF_CHECK_EQUAL(outcome::of_run("goal", run_state::succeeded, steps, mutating), "no_fault");
  steps.back() = conclusion(3, R"({"outcome":"unknown_cause","recovery":"none"})");
  CAF_CHECK_EQUAL(outcome::of_run("goal", run_state::succeeded, steps, mutating), "unexplained");
}

CAF_TEST(a run whose only action was denied is denied however it concluded) {
  std::vector<step> steps{tool_step(1, "deploy.rollback", step_state::failed, denied_result),
                          conclusion(2, R"({"outcome":"diagnosed","recovery":"none"})")};
  CAF_CHECK_EQUAL(outcome::of_run("goal", run_state::succeeded, steps, mutating), "denied");
  steps.pop_back(); // a flow that ended on the denial
  CAF_CHECK_EQUAL(outcome::of_run("flow", run_state::failed, steps, mutating), "denied");
}

CAF_TEST(without a stated result the checks after the last action decide) {
  std::vector<step> steps{tool_step(1, "deploy.rollback", step_state::succeeded),
                          check_step(2, false), check_step(3, true)};
  CAF_CHECK_EQUAL(outcome::of_run("flow", run_state::succeeded, steps, mutating), "mitigated");
  steps.push_back(tool_step(4, "deploy.rollback", step_state::succeeded));
  CAF_CHECK_EQUAL(outcome::of_run("goal", run_state::succeeded, steps, mutating), "unverified");
  steps.push_back(check_step(5, false));
  CAF_CHECK_EQUAL(outcome::of_run("flow", run_state::failed, steps, mutating), "not_mitigated");
}

CAF_TEST(a run that changed nothing diagnosed or completed) {
  std::vector<step> steps{tool_step(1, "service.describe", step_state::succeeded)};
  CAF_CHECK_EQUAL(outcome::of_run("goal", run_state::succeeded, steps, mutating), "diagnosed");
  CAF_CHECK_EQUAL(outcome::of_run("flow", run_state::succeeded, steps, mutating), "completed");
  CAF_CHECK_EQUAL(outcome::of_run("goal", run_state::failed, steps, mutating), "");
  CAF_CHECK_EQUAL(outcome::of_run("goal", run_state::cancelled, steps, mutating), "");
}
