// Flow runs on CAF's deterministic scheduler over a real SQLite store (docs/flows.md, "Running a
// flow"): every step kind, retries with their backoff, timeouts, each on_failure mode, parallel
// joins (all / any) with a branch failing, cancellation in the middle of a parallel block, and
// a restart of the kernel while a flow waits for its branches.
#define CAF_SUITE kernel_flows
#include "config/flows/flow_file.hpp"
#include "core/flows/inputs.hpp"
#include "core/flows/runner.hpp"
#include "tests/support/caf_test.hpp"
#include "tests/support/kernel_fixture.hpp"

using namespace sreh;
using namespace sreh::actors;

namespace {

struct flow_fixture : kernel_fixture {
  flows::flow load_flow(const std::string& text) {
    auto f = config::load_flow_string(text, "t.yaml");
    if (!f)
      CAF_FAIL("flow does not load: " << f.error().message);
    return std::move(*f);
  }

  /// Starts a run of `text` (also made callable by `flow` steps).
  std::string start_flow(const std::string& text, const std::string& inputs = "{}") {
    auto f = load_flow(text);
    cfg.flows.loaded.push_back(f);
    auto in = flows::resolve_inputs(f, inputs);
    CAF_REQUIRE(in.has_value());
    auto req = make_request("flow " + f.name, 0, flows::max_run_steps, {});
    req.kind = "flow";
    req.spec = flows::pin(f, *in);
    auto rep = ask_kernel(caf::make_message(submit_atom::value, req));
    CAF_REQUIRE_EQUAL(rep.err.code, errc::ok);
    return rep.run_id;
  }

  std::string state(const std::string& id) { return to_string(load(id).state); }

  /// Each journaled step as `KIND FLOWSTEP PHASE STATE` ("conclude" alone for the conclusion).
  std::vector<std::string> journal(const std::string& id) {
    std::vector<std::string> out;
    for (const auto& s : load_steps(id)) {
      auto d = json::parse_object(s.decision);
      std::string tagline = to_string(s.kind);
      if (d && d->HasMember("detail") && (*d)["detail"].IsObject() &&
          (*d)["detail"].HasMember("flow")) {
        const auto& f = (*d)["detail"]["flow"];
        tagline += std::string{" "} + f["step"].GetString() + " " + f["phase"].GetString();
      }
      if (s.kind != step_kind::conclude)
        tagline += std::string{" "} + to_string(s.state);
      out.push_back(tagline);
    }
    return out;
  }

  /// Whether the journal of `id` is `want`; shows both when it is not.
  bool journal_is(const std::string& id, const std::vector<std::string>& want) {
    auto got = journal(id);
    if (got == want)
      return true;
    std::string shown;
    for (const auto& g : got)
      shown += "\n    " + g;
    CAF_MESSAGE("journal of " << id << ":" << shown);
    return false;
  }

  /// The runs flow run `parent` started, oldest first.
  std::vector<sreh::run> children(const std::string& parent) {
    persistence::run_filter f;
    f.limit = 500;
    auto page = db->list_runs(f);
    CAF_REQUIRE(page.has_value());
    std::vector<sreh::run> out;
    for (auto i = page->runs.rbegin(); i != page->runs.rend(); ++i)
      if (i->parent == parent)
        out.push_back(*i);
    return out;
  }
};

using strings = std::vector<std::string>;

} // namespace

CAF_TEST_FIXTURE_SCOPE(kernel_flows_tests, flow_fixture)

CAF_TEST(tool steps run in order with keys of the flow run and step and earlier outputs) {
  auto id = start_flow(R"(flow: f
steps:
  - {id: first, tool: probe.write, args: {action: go}}
  - {id: second, tool: probe.write, args: {action: "after ${steps.first.output.written}"}}
)");
  CAF_CHECK_EQUAL(state(id), "succeeded");
  CAF_CHECK(
    journal_is(id, strings{"tool first run succeeded", "tool second run succeeded", "conclude"}));
  CAF_CHECK_EQUAL(probes->writes[id + "/first"], 1);
  CAF_CHECK_EQUAL(probes->writes[id + "/second"], 1);
  auto steps = load_steps(id);
  CAF_CHECK_EQUAL(steps[1].args, R"({"action":"after true"})");
  CAF_CHECK_EQUAL(probes->violations, 0); // every effect ran after its intent was durable
  auto r = load(id);
  CAF_CHECK_EQUAL(r.kind, "flow");
}

CAF_TEST(a failed step is retried after its backoff and fails after its last attempt) {
  auto id = start_flow(R"(flow: f
steps:
  - id: flaky
    tool: probe.fail
    retries: {max: 2, backoff: {initial: 10s, multiplier: 3}}
)");
  CAF_CHECK_EQUAL(state(id), "waiting"); // the backoff is a durable timer: passivated
  CAF_CHECK_EQUAL(rt->counters.active.load(), 0);
  advance_time(std::chrono::seconds(10));
  settle();
  CAF_CHECK_EQUAL(state(id), "waiting"); // the second backoff is 30 s
  advance_time(std::chrono::seconds(30));
  settle();
  CAF_CHECK_EQUAL(state(id), "failed");
  CAF_CHECK(journal_is(id, strings{"tool flaky run failed", "timer flaky backoff succeeded",
                                   "tool flaky run failed", "timer flaky backoff succeeded",
                                   "tool flaky run failed"}));
  auto steps = load_steps(id);
  CAF_CHECK_EQUAL(steps[2].idempotency_key, id + "/flaky#2");
  CAF_CHECK_EQUAL(steps[4].idempotency_key, id + "/flaky#3");
  CAF_CHECK(load(id).error.find("step flaky failed: probe.fail: broken on purpose (after 3 "
                                "attempts)") != std::string::npos);
}

CAF_TEST(on_failure continue goes on and goto jumps) {
  auto id = start_flow(R"(flow: f
steps:
  - {id: a, tool: probe.fail, on_failure: continue}
  - {id: b, tool: probe.fail, on_failure: "goto:d"}
  - {id: c, tool: probe.write, args: {action: skipped}}
  - {id: d, tool: probe.write, args: {action: "a was ${steps.a.status}, c ${steps.c.status}"}}
)");
  CAF_CHECK_EQUAL(state(id), "succeeded");
  CAF_CHECK(journal_is(
    id, strings{"tool a run failed", "tool b run failed", "tool d run succeeded", "conclude"}));
  auto steps = load_steps(id);
  CAF_CHECK_EQUAL(steps[2].args, R"({"action":"a was failed, c skipped"})");
  CAF_CHECK_EQUAL(probes->writes.count(id + "/c"), 0u);
}

CAF_TEST(on_failure compensate undoes the steps done so far newest first then fails) {
  auto id = start_flow(R"(flow: f
steps:
  - id: a
    tool: probe.write
    args: {action: a}
    compensate: {tool: probe.write, args: {action: undo-a}}
  - {id: b, tool: probe.read}
  - id: c
    tool: probe.write
    args: {action: c}
    compensate: {tool: probe.write, args: {action: undo-c}}
  - {id: d, tool: probe.fail, on_failure: compensate}
)");
  CAF_CHECK_EQUAL(state(id), "failed");
  CAF_CHECK(journal_is(id, strings{"tool a run succeeded", "tool b run succeeded",
                                   "tool c run succeeded", "tool d run failed",
                                   "tool c compensate succeeded", "tool a compensate succeeded"}));
  CAF_CHECK_EQUAL(probes->writes[id + "/c/compensate"], 1);
  CAF_CHECK_EQUAL(probes->writes[id + "/a/compensate"], 1);
  CAF_CHECK(load(id).error.find("compensated c, a") != std::string::npos);
}

CAF_TEST(a condition chooses its branch from the inputs) {
  const char* text = R"(flow: f
inputs:
  n: {type: number}
steps:
  - id: big
    condition:
      - {when: "inputs.n > 5", then: large}
    else: small
  - {id: large, tool: probe.write, args: {action: large}, next: end}
  - {id: small, tool: probe.write, args: {action: small}}
)";
  auto hi = start_flow(text, R"({"n": 7})");
  auto lo = start_flow(text, R"({"n": 2})");
  CAF_CHECK(
    journal_is(hi, strings{"observe big check succeeded", "tool large run succeeded", "conclude"}));
  CAF_CHECK(
    journal_is(lo, strings{"observe big check succeeded", "tool small run succeeded", "conclude"}));
}

CAF_TEST(a wait is a durable timer that survives a restart of the kernel) {
  auto id = start_flow(R"(flow: f
steps:
  - {id: settle, wait: 5m}
  - {id: after, tool: probe.write, args: {action: after}}
)");
  CAF_CHECK_EQUAL(state(id), "waiting");
  caf::anon_send_exit(sup, caf::exit_reason::user_shutdown);
  settle();
  advance_time(std::chrono::minutes(6)); // the node was down when the timer was due
  sup = spawn_supervisor(sys, rt);
  run();
  CAF_CHECK_EQUAL(state(id), "succeeded");
  CAF_CHECK_EQUAL(probes->writes[id + "/after"], 1);
}

CAF_TEST(a wait until an expression fails at its deadline naming it) {
  // No world state observed on this node: the expression does not hold yet, is checked again
  // after the world sync's period, and at the deadline the step fails saying why.
  auto id = start_flow(R"(flow: f
steps:
  - id: calm
    wait: {until: "world.checkout.error_rate < 0.01", deadline: 1m, every: 10s}
)");
  CAF_CHECK_EQUAL(state(id), "waiting");
  advance_time(std::chrono::minutes(2));
  run();
  CAF_CHECK_EQUAL(state(id), "failed");
  CAF_CHECK(load(id).error.find("did not hold within 60 s") != std::string::npos);
  CAF_CHECK(load(id).error.find("world state has not been observed yet") != std::string::npos);
}

CAF_TEST(an approval step parks the flow and a denial fails the step) {
  const char* text = R"(flow: f
steps:
  - id: ok
    approval: {approvers: 1, roles: [approver], timeout: 1h, reason: "may I?"}
    on_failure: "goto:denied"
  - {id: go, tool: probe.write, args: {action: go}, next: end}
  - {id: denied, tool: probe.read}
)";
  auto yes = start_flow(text);
  auto no = start_flow(text);
  CAF_CHECK_EQUAL(state(yes), "waiting");
  auto a = waiting_approval(yes);
  CAF_CHECK_EQUAL(a.reason, "may I?");
  auto voted = vote(a.id, "alice", "approver", true);
  CAF_CHECK_EQUAL(voted.err.code, errc::ok);
  settle();
  CAF_CHECK_EQUAL(state(yes), "succeeded");
  CAF_CHECK(
    journal_is(yes, strings{"approval ok run succeeded", "tool go run succeeded", "conclude"}));
  voted = vote(waiting_approval(no).id, "alice", "approver", false);
  CAF_CHECK_EQUAL(voted.err.code, errc::ok);
  settle();
  CAF_CHECK(
    journal_is(no, strings{"approval ok run failed", "tool denied run succeeded", "conclude"}));
}

CAF_TEST(parallel join all fails when one branch fails) {
  auto id = start_flow(R"(flow: f
steps:
  - id: both
    parallel:
      branches:
        good: [{id: w, tool: probe.write, args: {action: w}}]
        bad: [{id: x, tool: probe.fail}]
  - {id: after, tool: probe.write, args: {action: after}}
)");
  settle();
  CAF_CHECK_EQUAL(state(id), "failed");
  auto kids = children(id);
  CAF_REQUIRE_EQUAL(kids.size(), 2u);
  CAF_CHECK_EQUAL(kids[0].idempotency_key, id + "/both/good");
  CAF_CHECK_EQUAL(to_string(kids[0].state), std::string{"succeeded"});
  CAF_CHECK_EQUAL(to_string(kids[1].state), std::string{"failed"});
  CAF_CHECK(load(id).error.find("1 of 2 failed") != std::string::npos);
  CAF_CHECK_EQUAL(probes->writes.count(id + "/after"), 0u);
}

CAF_TEST(parallel join any succeeds with the first branch and cancels the others) {
  auto id = start_flow(R"(flow: f
steps:
  - id: race
    parallel:
      join: any
      branches:
        slow: [{id: ask, approval: {roles: [approver]}}]
        fast: [{id: w, tool: probe.write, args: {action: w}}]
        broken: [{id: x, tool: probe.fail}]
  - {id: after, tool: probe.write, args: {action: after}}
)");
  settle();
  CAF_CHECK_EQUAL(state(id), "succeeded");
  CAF_CHECK_EQUAL(probes->writes[id + "/after"], 1);
  auto kids = children(id);
  CAF_REQUIRE_EQUAL(kids.size(), 3u);
  CAF_CHECK_EQUAL(to_string(kids[0].state), std::string{"cancelled"}); // slow
  CAF_CHECK_EQUAL(to_string(kids[1].state), std::string{"succeeded"}); // fast
  CAF_CHECK_EQUAL(to_string(kids[2].state), std::string{"failed"});    // broken
}

CAF_TEST(cancelling a flow in the middle of a parallel block cancels its branches) {
  auto id = start_flow(R"(flow: f
steps:
  - id: both
    parallel:
      branches:
        one: [{id: a, approval: {roles: [approver]}}]
        two: [{id: b, wait: 1h}]
)");
  settle();
  CAF_CHECK_EQUAL(state(id), "waiting");
  CAF_CHECK_EQUAL(to_string(load(id).waiting_for), std::string{"runs"});
  auto cancelled = cancel(id);
  CAF_CHECK_EQUAL(cancelled.err.code, errc::ok);
  settle();
  CAF_CHECK_EQUAL(state(id), "cancelled");
  for (const auto& k : children(id))
    CAF_CHECK_EQUAL(to_string(k.state), std::string{"cancelled"});
}

CAF_TEST(a parallel block that takes longer than its timeout fails and cancels its branches) {
  auto id = start_flow(R"(flow: f
steps:
  - id: both
    timeout: 30s
    parallel:
      branches:
        one: [{id: a, tool: probe.write, args: {action: a}}]
        two: [{id: b, wait: 1h}]
    on_failure: continue
  - {id: after, tool: probe.write, args: {action: "both ${steps.both.status}"}}
)");
  settle();
  CAF_CHECK_EQUAL(state(id), "waiting");
  advance_time(std::chrono::seconds(31));
  settle();
  CAF_CHECK_EQUAL(state(id), "succeeded");
  auto steps = load_steps(id);
  CAF_CHECK(steps[0].error.find("timed out after 30 s") != std::string::npos);
  CAF_CHECK_EQUAL(steps[1].args, R"({"action":"both failed"})");
  auto kids = children(id);
  CAF_REQUIRE_EQUAL(kids.size(), 2u);
  CAF_CHECK_EQUAL(to_string(kids[1].state), std::string{"cancelled"});
}

CAF_TEST(a goal step is a run of the reasoner and its conclusion is the output) {
  script({}); // the scripted model concludes at once
  auto id = start_flow(R"(flow: f
steps:
  - {id: ask, goal: "what is wrong?", labels: {team: sre}}
  - {id: after, tool: probe.write, args: {action: "${steps.ask.output}"}}
)");
  settle();
  CAF_CHECK_EQUAL(state(id), "succeeded");
  auto kids = children(id);
  CAF_REQUIRE_EQUAL(kids.size(), 1u);
  CAF_CHECK_EQUAL(kids[0].kind, "goal");
  CAF_CHECK_EQUAL(kids[0].goal, "what is wrong?");
  CAF_CHECK_EQUAL(kids[0].labels, R"({"team":"sre"})");
  auto args = load_steps(id)[1].args;
  CAF_CHECK_EQUAL(args, R"({"action":)" + json::quote(kids[0].conclusion) + "}");
}

CAF_TEST(a flow step runs another flow with its inputs) {
  start_flow(R"(flow: callee
inputs:
  what: {type: string}
steps:
  - {id: w, tool: probe.write, args: {action: "${inputs.what}"}}
)",
             R"({"what": "first"})");
  auto id = start_flow(R"(flow: caller
steps:
  - {id: call, flow: callee, inputs: {what: nested}}
)");
  settle();
  CAF_CHECK_EQUAL(state(id), "succeeded");
  auto kids = children(id);
  CAF_REQUIRE_EQUAL(kids.size(), 1u);
  CAF_CHECK_EQUAL(kids[0].kind, "flow");
  auto steps = load_steps(kids[0].id);
  CAF_CHECK_EQUAL(steps[0].args, R"({"action":"nested"})");
}

CAF_TEST(a flow waiting for its branches resumes after a restart of the kernel) {
  auto id = start_flow(R"(flow: f
steps:
  - id: both
    parallel:
      branches:
        one: [{id: a, wait: 1m}]
        two: [{id: b, tool: probe.write, args: {action: b}}]
  - {id: after, tool: probe.write, args: {action: after}}
)");
  settle();
  CAF_CHECK_EQUAL(state(id), "waiting");
  caf::anon_send_exit(sup, caf::exit_reason::user_shutdown);
  settle();
  advance_time(std::chrono::minutes(2)); // branch one's timer was due while the node was down
  sup = spawn_supervisor(sys, rt);
  run();
  CAF_CHECK_EQUAL(state(id), "succeeded");
  CAF_CHECK_EQUAL(probes->writes[id + "/after"], 1);
  auto kids = children(id);
  CAF_REQUIRE_EQUAL(kids.size(), 2u);
  CAF_CHECK_EQUAL(probes->writes[kids[1].id + "/b"], 1); // once, though the node restarted
}

CAF_TEST_FIXTURE_SCOPE_END()
