// The action runtime after an action: a tool's post-condition is checked (at once, or after a
// durable timer that survives restarts), and an action whose effect does not hold is
// compensated — each check and undo a journaled step.

#define CAF_SUITE kernel_postconditions
#include "tests/support/caf_test.hpp"
#include "tests/support/kernel_fixture.hpp"

using namespace sreh;
using namespace sreh::actors;

namespace {

struct postcondition_fixture : kernel_fixture {
  std::string start(std::string goal) {
    auto rep =
      ask_kernel(caf::make_message(submit_atom::value, make_request(std::move(goal), 0, 0, {})));
    CAF_REQUIRE_EQUAL(rep.err.code, errc::ok);
    return rep.run_id;
  }

  std::vector<std::string> step_kinds(const std::string& id) {
    std::vector<std::string> out;
    for (auto& s : load_steps(id))
      out.emplace_back(to_string(s.kind));
    return out;
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(kernel_postconditions_tests, postcondition_fixture)

CAF_TEST(an action whose effect holds is checked once and not undone) {
  script({{"probe.verified", R"({"action":"fix"})"}});
  auto id = start("verified action");
  CAF_CHECK_EQUAL(to_string(load(id).state), std::string{"succeeded"});
  std::vector<std::string> want{"tool", "observe", "conclude"};
  CAF_CHECK_EQUAL(step_kinds(id), want);
  auto steps = load_steps(id);
  CAF_CHECK(steps[1].result.find(R"("holds":true)") != std::string::npos);
  CAF_CHECK_EQUAL(probes->checks, 1);
  CAF_CHECK_EQUAL(probes->undone.size(), 0u);
}

CAF_TEST(an action whose effect does not hold is compensated with its own key) {
  probes->effect_holds = false;
  script({{"probe.verified", R"({"action":"fix"})"}});
  auto id = start("failed action");
  std::vector<std::string> want{"tool", "observe", "tool", "conclude"};
  CAF_CHECK_EQUAL(step_kinds(id), want);
  auto steps = load_steps(id);
  CAF_CHECK(steps[1].result.find(R"("holds":false)") != std::string::npos);
  CAF_CHECK(steps[2].decision.find(R"("compensates":1)") != std::string::npos);
  CAF_CHECK_EQUAL(steps[2].error, "");
  CAF_CHECK_EQUAL(to_string(steps[2].state), std::string{"succeeded"});
  CAF_CHECK_EQUAL(probes->undone[id + ":1"], 1); // undone with the original call's key
  CAF_CHECK_EQUAL(probes->writes[id + ":1"], 1);
  CAF_CHECK_EQUAL(to_string(load(id).state), std::string{"succeeded"});
}

CAF_TEST(a delayed check parks the run on a durable timer) {
  probes->check_after_ms = 30'000;
  script({{"probe.verified", R"({"action":"fix"})"}});
  auto id = start("delayed check");
  auto r = load(id);
  CAF_CHECK_EQUAL(to_string(r.state), std::string{"waiting"});
  CAF_CHECK_EQUAL(to_string(r.waiting_for), std::string{"timer"});
  CAF_CHECK_EQUAL(rt->counters.active.load(), 0); // passivated
  CAF_CHECK_EQUAL(probes->checks, 0);
  advance_time(std::chrono::seconds(31));
  run();
  CAF_CHECK_EQUAL(to_string(load(id).state), std::string{"succeeded"});
  std::vector<std::string> want{"tool", "timer", "observe", "conclude"};
  CAF_CHECK_EQUAL(step_kinds(id), want);
  CAF_CHECK_EQUAL(probes->checks, 1);
}

CAF_TEST(a durable timer survives a restart of the kernel) {
  probes->check_after_ms = 30'000;
  script({{"probe.verified", R"({"action":"fix"})"}});
  auto id = start("timer across restart");
  caf::anon_send_exit(sup, caf::exit_reason::user_shutdown);
  settle();
  advance_time(std::chrono::seconds(45)); // the node was down when the timer was due
  sup = spawn_supervisor(sys, rt);
  run();
  CAF_CHECK_EQUAL(to_string(load(id).state), std::string{"succeeded"});
  CAF_CHECK_EQUAL(probes->checks, 1);
  CAF_CHECK_EQUAL(probes->writes[id + ":1"], 1);
}

CAF_TEST(cancelling a run waiting on a timer ends it and the timer does nothing) {
  probes->check_after_ms = 30'000;
  script({{"probe.verified", R"({"action":"fix"})"}});
  auto id = start("cancel timer");
  auto rep = ask_kernel(caf::make_message(cancel_atom::value, id, std::string{"tester"}));
  CAF_CHECK_EQUAL(rep.err.code, errc::ok);
  advance_time(std::chrono::seconds(31));
  run();
  CAF_CHECK_EQUAL(to_string(load(id).state), std::string{"cancelled"});
  CAF_CHECK_EQUAL(probes->checks, 0);
}

CAF_TEST_FIXTURE_SCOPE_END()
