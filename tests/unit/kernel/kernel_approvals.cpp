// Policy decisions, durable approvals and parked runs in the kernel, on CAF's deterministic
// scheduler: a run that needs approval parks (no actor), votes and deadlines settle it, and the
// settled approval wakes it; nothing mutating runs without the right decision.

#define CAF_SUITE kernel_approvals
#include <tuple>

#include "core/base/json.hpp"
#include "tests/support/caf_test.hpp"
#include "tests/support/kernel_fixture.hpp"

using namespace sreh;
using namespace sreh::actors;

namespace {

struct approvals_fixture : kernel_fixture {
  approvals_fixture() {
    policy_.default_mode = policy::mode::review;
    policy_.default_approval.approvers = 1;
    policy_.default_approval.roles = {"approver"};
    policy_.default_approval.timeout_s = 3600;
  }

  /// Submits without firing timers; returns the run id.
  std::string start(std::string goal) {
    auto rep =
      ask_kernel(caf::make_message(submit_atom::value, make_request(std::move(goal), 0, 0, {})));
    CAF_REQUIRE_EQUAL(rep.err.code, errc::ok);
    return rep.run_id;
  }

  std::string state_of(const std::string& id) { return to_string(load(id).state); }

  void add_rule(policy::rule r) { policy_.rules.push_back(std::move(r)); }

  /// Autonomous mode, but at most `max` calls of `tool` an hour (rule `id` denies the next).
  void limit_writes(std::string id, std::int64_t max, std::string tool = "probe.write") {
    policy_.default_mode = policy::mode::autonomous;
    policy::rule r;
    r.id = std::move(id);
    r.tools = {std::move(tool)};
    r.limit = policy::rate_limit{max, 3600, "tool"};
    r.effect = policy::verdict::deny;
    add_rule(std::move(r));
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(kernel_approvals_tests, approvals_fixture)

CAF_TEST(in review mode a mutating step parks the run until an approver approves) {
  script({{"probe.read", "{}"}, {"probe.write", R"({"action":"restart"})"}});
  auto id = start("needs approval");
  CAF_CHECK_EQUAL(state_of(id), "waiting");
  CAF_CHECK_EQUAL(probes->reads, 1);              // read-only steps need no approval
  CAF_CHECK_EQUAL(probes->writes.size(), 0u);     // nothing mutating ran
  CAF_CHECK_EQUAL(rt->counters.active.load(), 0); // passivated: no actor
  auto a = waiting_approval(id);
  CAF_CHECK_EQUAL(to_string(a.state), std::string{"pending"});
  CAF_CHECK_EQUAL(a.rule_id, "mode:review");
  CAF_CHECK_EQUAL(a.requester, "tester");
  CAF_CHECK_EQUAL(a.tool, "probe.write");
  auto rep = vote(a.id, "alice", "approver", true, "go");
  CAF_REQUIRE_EQUAL(rep.err.code, errc::ok);
  settle();
  CAF_CHECK_EQUAL(state_of(id), "succeeded");
  CAF_CHECK_EQUAL(probes->writes[id + ":2"], 1);
  auto kinds = event_kinds(id);
  for (auto k :
       {"approval.requested", "run.waiting", "approval.voted", "approval.decided", "run.resumed"})
    CAF_CHECK(std::find(kinds.begin(), kinds.end(), k) != kinds.end());
  auto evs = events_of(id);
  for (std::size_t i = 0; i < evs.size(); ++i)
    CAF_CHECK_EQUAL(evs[i].run_seq, static_cast<std::int64_t>(i + 1));
}

CAF_TEST(the requester can never approve its own action) {
  script({{"probe.write", "{}"}});
  auto id = start("self approval");
  auto a = waiting_approval(id);
  auto rep = vote(a.id, "tester", "admin", true);
  CAF_CHECK_EQUAL(rep.err.code, errc::forbidden);
  settle();
  CAF_CHECK_EQUAL(state_of(id), "waiting");
  CAF_CHECK_EQUAL(waiting_approval(id).votes.size(), 0u);
  CAF_CHECK_EQUAL(probes->writes.size(), 0u);
}

CAF_TEST(a role below the required one cannot decide) {
  script({{"probe.write", "{}"}});
  auto id = start("role too low");
  auto rep = vote(waiting_approval(id).id, "olga", "operator", true);
  CAF_CHECK_EQUAL(rep.err.code, errc::forbidden);
  CAF_CHECK_EQUAL(state_of(id), "waiting");
}

CAF_TEST(a denied action is never executed and the run goes on with the refusal) {
  script({{"probe.write", "{}"}, {"probe.read", "{}"}});
  auto id = start("denied");
  auto rep = vote(waiting_approval(id).id, "bob", "approver", false, "too risky");
  CAF_REQUIRE_EQUAL(rep.err.code, errc::ok);
  settle();
  CAF_CHECK_EQUAL(state_of(id), "succeeded");
  auto steps = load_steps(id);
  CAF_CHECK_EQUAL(to_string(steps[0].state), std::string{"failed"});
  CAF_CHECK_EQUAL(steps[0].error, R"(not executed: denied by bob ("too risky"))");
  CAF_CHECK_EQUAL(probes->writes.size(), 0u);
  CAF_CHECK_EQUAL(probes->reads, 1);
}

CAF_TEST(two approvers means two distinct identities and a repeated vote changes nothing) {
  policy::rule r;
  r.id = "two-people";
  r.tools = {"probe.write"};
  r.effect = policy::verdict::require_approval;
  r.approval.approvers = 2;
  r.approval.roles = {"approver"};
  add_rule(r);
  script({{"probe.write", "{}"}});
  auto id = start("two approvers");
  auto a = waiting_approval(id);
  CAF_CHECK_EQUAL(a.required, 2);
  CAF_CHECK_EQUAL(a.rule_id, "two-people");
  CAF_CHECK_EQUAL(vote(a.id, "alice", "approver", true).err.code, errc::ok);
  CAF_CHECK_EQUAL(vote(a.id, "alice", "approver", true).err.code, errc::ok); // idempotent
  settle();
  CAF_CHECK_EQUAL(state_of(id), "waiting");
  CAF_CHECK_EQUAL(waiting_approval(id).votes.size(), 1u);
  CAF_CHECK_EQUAL(vote(a.id, "bob", "approver", true).err.code, errc::ok);
  settle();
  CAF_CHECK_EQUAL(state_of(id), "succeeded");
  CAF_CHECK_EQUAL(probes->writes[id + ":1"], 1);
  // A decided approval refuses further votes.
  CAF_CHECK_EQUAL(vote(a.id, "carol", "approver", false).err.code, errc::conflict);
}

CAF_TEST(an approval that times out is denied and the step is not executed) {
  policy_.default_approval.timeout_s = 60;
  script({{"probe.write", "{}"}});
  auto id = start("times out");
  CAF_CHECK_EQUAL(state_of(id), "waiting");
  advance_time(std::chrono::seconds(61));
  run(); // the deadline fires
  CAF_CHECK_EQUAL(state_of(id), "succeeded");
  auto steps = load_steps(id);
  CAF_CHECK(steps[0].error.find("expired undecided") != std::string::npos);
  CAF_CHECK_EQUAL(probes->writes.size(), 0u);
  auto kinds = event_kinds(id);
  CAF_CHECK(std::find(kinds.begin(), kinds.end(), "approval.expired") != kinds.end());
}

CAF_TEST(a timeout that escalates hands the decision to the escalation roles) {
  policy_.default_approval.timeout_s = 60;
  policy_.default_approval.on_timeout = "escalate";
  policy_.default_approval.escalate_to = {"admin"};
  script({{"probe.write", "{}"}});
  auto id = start("escalates");
  auto a = waiting_approval(id);
  advance_time(std::chrono::seconds(61));
  settle();
  a = waiting_approval(id);
  CAF_CHECK(a.escalated);
  CAF_CHECK_EQUAL(to_string(a.state), std::string{"pending"});
  CAF_CHECK_EQUAL(a.roles.size(), 1u);
  CAF_CHECK_EQUAL(vote(a.id, "alice", "approver", true).err.code, errc::forbidden);
  CAF_CHECK_EQUAL(vote(a.id, "root", "admin", true).err.code, errc::ok);
  settle();
  CAF_CHECK_EQUAL(state_of(id), "succeeded");
  CAF_CHECK_EQUAL(probes->writes[id + ":1"], 1);
}

CAF_TEST(a policy rule can deny an action outright) {
  policy::rule r;
  r.id = "no-writes";
  r.tools = {"probe.*"};
  r.risks = {"medium"};
  r.effect = policy::verdict::deny;
  r.reason = "writes are frozen";
  add_rule(r);
  script({{"probe.write", "{}"}});
  auto id = start("denied by rule");
  CAF_CHECK_EQUAL(state_of(id), "succeeded");
  auto steps = load_steps(id);
  CAF_CHECK_EQUAL(to_string(steps[0].state), std::string{"failed"});
  CAF_CHECK(steps[0].error.find("denied by policy") != std::string::npos);
  CAF_CHECK(steps[0].decision.find(R"("rule":"no-writes")") != std::string::npos);
  CAF_CHECK_EQUAL(probes->writes.size(), 0u);
}

CAF_TEST(runs proposing at the same moment cannot all take the last slot of a rate limit) {
  // An alert storm: two runs want the same mutating action, limited to one per hour. The second
  // checks while the first one's action is allowed but has not run yet (its intent is waiting
  // for the disk): the allowed action already counts, so the second is denied.
  limit_writes("one-write-an-hour", 1);
  script({{"probe.write", "{}"}});
  start_node();
  queue.hold = true;
  self->send(sup, submit_atom::value, make_request("storm 1", 0, 0, {}));
  self->send(sup, submit_atom::value, make_request("storm 2", 0, 0, {}));
  run();
  release_and_run(); // both runs are created and propose; their intents wait for the disk
  CAF_REQUIRE_EQUAL(queue.held.size(), 2u);
  std::vector<std::string> ids;
  for (const auto& [batch, cb] : queue.held)
    ids.push_back(batch.update->id);
  for (int i = 0; i < 10 && !queue.held.empty(); ++i)
    release_and_run();
  CAF_CHECK_EQUAL(probes->writes.size(), 1u);
  std::size_t denied = 0;
  for (const auto& id : ids) {
    CAF_CHECK_EQUAL(state_of(id), "succeeded");
    for (const auto& s : load_steps(id))
      if (s.decision.find(R"("rule":"one-write-an-hour")") != std::string::npos)
        ++denied;
  }
  CAF_CHECK_EQUAL(denied, 1u);
  // The allowed write succeeded: its hold stays for the window (the store shows it too, and a
  // check counts it once); the denied one never held a slot.
  CAF_CHECK_EQUAL(rt->holds.size(), 1u);
}

CAF_TEST(a mutating action that failed gives its rate limit slot back) {
  // Rate limits count what happened: a failed write is not one. Its hold goes when its outcome
  // commits, and the store does not count failed steps.
  limit_writes("one-broken-write-an-hour", 1, "probe.broken_write");
  script({{"probe.broken_write", "{}"}});
  auto first = start("fails");
  CAF_CHECK_EQUAL(state_of(first), "succeeded"); // the run goes on with the failure
  CAF_CHECK_EQUAL(rt->holds.size(), 0u);
  auto second = start("may try again");
  CAF_CHECK_EQUAL(state_of(second), "succeeded");
  CAF_CHECK_EQUAL(probes->broken_writes, 2);
  auto steps = load_steps(second);
  CAF_REQUIRE(!steps.empty());
  CAF_CHECK(steps[0].decision.find("one-broken-write-an-hour") == std::string::npos);
}

CAF_TEST(actions another node runs count against a rate limit) {
  // node-b runs a write it was allowed and one that was approved (their intents are in the
  // shared store, no outcome yet); a third waits for its approval. With three writes an hour,
  // one slot is left here.
  limit_writes("three-writes-an-hour", 3);
  const std::tuple<const char*, const char*, run_state> others[] = {
    {"run_b1", "allow", run_state::running},
    {"run_b2", "require_approval", run_state::waiting},
    {"run_b3", "require_approval", run_state::running}};
  for (const auto& [id, effect, state] : others) {
    sreh::run other;
    other.id = id;
    other.goal = "elsewhere";
    other.state = state;
    other.node_id = "node-b";
    other.created_at = other.updated_at = clk.now_us();
    step s;
    s.run_id = id;
    s.n = 1;
    s.tool = "probe.write";
    s.args = "{}";
    s.idempotency_key = std::string{id} + ":1";
    s.started_at = clk.now_us();
    s.decision =
      fmt::format(R"({{"effect":"{}","rule":"","reason":"","policy_version":"t"}})", effect);
    std::vector<persistence::write_batch> b(1);
    b[0].create = other;
    b[0].steps.push_back(s);
    CAF_REQUIRE(!db->commit(b).front().err);
  }
  script({{"probe.write", "{}"}});
  auto first = start("the last slot");
  CAF_CHECK_EQUAL(state_of(first), "succeeded");
  CAF_CHECK_EQUAL(probes->writes.size(), 1u);
  auto second = start("no slot left");
  CAF_CHECK_EQUAL(state_of(second), "succeeded");
  CAF_CHECK_EQUAL(probes->writes.size(), 1u);
  auto steps = load_steps(second);
  CAF_REQUIRE(!steps.empty());
  CAF_CHECK(steps[0].decision.find(R"("rule":"three-writes-an-hour")") != std::string::npos);
}

CAF_TEST(decisions work after a restart of the kernel) {
  script({{"probe.write", "{}"}});
  auto id = start("restart");
  auto a = waiting_approval(id);
  caf::anon_send_exit(sup, caf::exit_reason::user_shutdown);
  settle();
  sup = spawn_supervisor(sys, rt); // a new kernel: the run stays parked, its deadline re-armed
  settle();
  CAF_CHECK_EQUAL(state_of(id), "waiting");
  CAF_CHECK_EQUAL(vote(a.id, "alice", "approver", true).err.code, errc::ok);
  settle();
  CAF_CHECK_EQUAL(state_of(id), "succeeded");
  CAF_CHECK_EQUAL(probes->writes[id + ":1"], 1);
}

CAF_TEST(an approval timeout fires across a restart) {
  policy_.default_approval.timeout_s = 60;
  script({{"probe.write", "{}"}});
  auto id = start("timeout across restart");
  caf::anon_send_exit(sup, caf::exit_reason::user_shutdown);
  settle();
  sup = nullptr;
  advance_time(std::chrono::seconds(120)); // the node was down past the deadline
  start_node();
  run();
  CAF_CHECK_EQUAL(state_of(id), "succeeded");
  CAF_CHECK_EQUAL(to_string(waiting_approval(id).state), std::string{"expired"});
  CAF_CHECK_EQUAL(probes->writes.size(), 0u);
}

CAF_TEST(an in - doubt step confirmed as done is not executed again) {
  auto id = seed_interrupted_run("probe.write", R"({"action":"x"})");
  probes->cannot_tell = true;
  start_node();
  settle();
  auto a = waiting_approval(id);
  CAF_CHECK_EQUAL(to_string(a.kind), std::string{"in_doubt"});
  CAF_CHECK_EQUAL(vote(a.id, "alice", "approver", true, "I checked: it ran").err.code, errc::ok);
  settle();
  CAF_CHECK_EQUAL(state_of(id), "succeeded");
  CAF_CHECK_EQUAL(to_string(load_steps(id)[0].state), std::string{"succeeded"});
  CAF_CHECK_EQUAL(probes->writes.size(), 0u);
}

CAF_TEST(an in - doubt step confirmed as not done runs exactly once) {
  auto id = seed_interrupted_run("probe.write", R"({"action":"x"})");
  probes->cannot_tell = true;
  start_node();
  settle();
  CAF_CHECK_EQUAL(vote(waiting_approval(id).id, "alice", "approver", false).err.code, errc::ok);
  settle();
  CAF_CHECK_EQUAL(state_of(id), "succeeded");
  CAF_CHECK_EQUAL(probes->writes[id + ":1"], 1);
  auto attempts = load_steps(id)[0].attempts;
  CAF_CHECK_EQUAL(attempts, 2);
}

CAF_TEST(cancelling a parked run expires its approval) {
  script({{"probe.write", "{}"}});
  auto id = start("cancel parked");
  auto a = waiting_approval(id);
  auto rep = ask_kernel(caf::make_message(cancel_atom::value, id, std::string{"tester"}));
  CAF_CHECK_EQUAL(rep.err.code, errc::ok);
  CAF_CHECK_EQUAL(state_of(id), "cancelled");
  CAF_CHECK_EQUAL(to_string(waiting_approval(id).state), std::string{"expired"});
  CAF_CHECK_EQUAL(vote(a.id, "alice", "approver", true).err.code, errc::conflict);
  CAF_CHECK_EQUAL(probes->writes.size(), 0u);
}

CAF_TEST_FIXTURE_SCOPE_END()
