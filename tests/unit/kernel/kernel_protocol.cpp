// The step protocol of the durable kernel on CAF's deterministic scheduler: intent committed
// before the side effect, outcome after; budgets, cancellation, error paths, commit failures and
// recovery of an intent without outcome. The store is real SQLite in a temp dir; commits happen
// inline (inline_commit_queue) so every message is under the test scheduler's control.

#define CAF_SUITE kernel_protocol
#include <map>

#include "actors/kernel/kernel.hpp"
#include "tests/support/caf_test.hpp"
#include "tests/support/kernel_fixture.hpp"

using namespace sreh;
using namespace sreh::actors;

CAF_TEST_FIXTURE_SCOPE(kernel_protocol_tests, kernel_fixture)

CAF_TEST(a run journals each intent before its side effect and finishes) {
  script({{"probe.read", R"({"x":1})"},
          {"probe.write", R"({"action":"a"})"},
          {"probe.read", R"({"x":2})"}});
  auto rep = submit("three steps");
  CAF_REQUIRE_EQUAL(rep.err.code, errc::ok);
  CAF_CHECK(rep.created);
  auto r = load(rep.run_id);
  CAF_CHECK_EQUAL(to_string(r.state), std::string{"succeeded"});
  CAF_CHECK_EQUAL(r.steps, 4); // three tools + the conclusion
  CAF_CHECK_EQUAL(r.conclusion, std::string{"script finished: 3 steps"});
  auto steps = load_steps(rep.run_id);
  CAF_REQUIRE_EQUAL(steps.size(), 4u);
  for (int i = 0; i < 3; ++i) {
    CAF_CHECK_EQUAL(to_string(steps[i].state), std::string{"succeeded"});
    CAF_CHECK_EQUAL(steps[i].idempotency_key, rep.run_id + ":" + std::to_string(i + 1));
    CAF_CHECK(steps[i].finished_at >= steps[i].started_at);
  }
  CAF_CHECK_EQUAL(to_string(steps[3].kind), std::string{"conclude"});
  // Every side effect saw its own intent already durable, and none saw an outcome yet.
  CAF_CHECK_EQUAL(probes->intent_seen_before_effect, 3);
  CAF_CHECK_EQUAL(probes->violations, 0);
  CAF_CHECK_EQUAL(probes->writes[rep.run_id + ":2"], 1);
}

CAF_TEST(events form a gap - free per - run sequence in protocol order) {
  script({{"probe.read", "{}"}, {"probe.read", "{}"}});
  auto rep = submit("events");
  auto kinds = event_kinds(rep.run_id);
  std::vector<std::string> want{"run.created", "run.started",  "step.intent",  "step.outcome",
                                "step.intent", "step.outcome", "step.outcome", "run.succeeded"};
  CAF_CHECK_EQUAL(kinds, want);
  auto evs = events_of(rep.run_id);
  for (std::size_t i = 0; i < evs.size(); ++i)
    CAF_CHECK_EQUAL(evs[i].run_seq, static_cast<std::int64_t>(i + 1));
  for (std::size_t i = 1; i < evs.size(); ++i)
    CAF_CHECK(evs[i].seq > evs[i - 1].seq);
}

CAF_TEST(an unknown tool is a failed step with a clear error and the run goes on) {
  script({{"no.such.tool", "{}"}, {"probe.read", "{}"}});
  auto rep = submit("unknown tool");
  auto steps = load_steps(rep.run_id);
  CAF_REQUIRE(steps.size() >= 2u);
  CAF_CHECK_EQUAL(to_string(steps[0].state), std::string{"failed"});
  CAF_CHECK_EQUAL(steps[0].error, std::string{"unknown tool 'no.such.tool'"});
  CAF_CHECK_EQUAL(to_string(steps[1].state), std::string{"succeeded"});
  CAF_CHECK_EQUAL(load(rep.run_id).conclusion, std::string{"script finished: 2 steps, 1 failed"});
}

CAF_TEST(arguments that break the tool schema fail the step and never reach the tool) {
  script({{"probe.write", R"({"action":42})"}, {"probe.write", R"({"bogus":true})"}});
  auto rep = submit("bad args");
  auto steps = load_steps(rep.run_id);
  CAF_REQUIRE(steps.size() >= 2u);
  CAF_CHECK_EQUAL(steps[0].error,
                  std::string{"invalid arguments for 'probe.write': field 'action': expected "
                              "string, got integer (keyword 'type' at pointer \"/action\")"});
  CAF_CHECK_EQUAL(steps[1].error,
                  std::string{"invalid arguments for 'probe.write': field 'bogus': is not a "
                              "known argument (keyword 'additionalProperties' at pointer "
                              "\"/bogus\")"});
  CAF_CHECK_EQUAL(probes->writes.size(), 0u);
}

CAF_TEST(a failing tool records its error as the step outcome) {
  script({{"probe.fail", "{}"}});
  auto rep = submit("tool fails");
  auto steps = load_steps(rep.run_id);
  CAF_CHECK_EQUAL(to_string(steps[0].state), std::string{"failed"});
  CAF_CHECK_EQUAL(steps[0].error, std::string{"probe.fail: broken on purpose"});
  CAF_CHECK_EQUAL(to_string(load(rep.run_id).state), std::string{"succeeded"});
}

CAF_TEST(an oversized result is truncated with its size and a preview) {
  script({{"probe.big", "{}"}});
  auto rep = submit("big result", 4096);
  auto steps = load_steps(rep.run_id);
  CAF_CHECK(steps[0].result_truncated);
  CAF_CHECK(steps[0].result.size() < 2048u);
  CAF_CHECK(steps[0].result.find(R"("bytes":100011)") != std::string::npos);
}

CAF_TEST(the step budget fails the run and names the limit) {
  std::vector<config::scripted_step> many(10, {"probe.read", "{}"});
  script(many);
  auto rep = submit("too many steps", 0, 3);
  auto r = load(rep.run_id);
  CAF_CHECK_EQUAL(to_string(r.state), std::string{"failed"});
  CAF_CHECK_EQUAL(r.error, std::string{"budget exhausted: 3 steps taken, max_steps is 3"});
  CAF_CHECK_EQUAL(probes->reads, 3);
}

CAF_TEST(a provider that throws fails the run with the provider named) {
  throwing_provider();
  auto rep = submit("provider breaks");
  auto r = load(rep.run_id);
  CAF_CHECK_EQUAL(to_string(r.state), std::string{"failed"});
  CAF_CHECK_EQUAL(r.error, std::string{"model provider 'thrower' failed: out of ideas"});
}

CAF_TEST(a failed commit is retried after a backoff and applies once) {
  script({{"probe.write", R"({"action":"once"})"}});
  queue.pass_first = 1; // the run is created, then
  queue.fail_next = 2;  // the first intent's commit fails twice before it goes through
  auto rep = submit("flaky store");
  auto r = load(rep.run_id);
  CAF_CHECK_EQUAL(to_string(r.state), std::string{"succeeded"});
  CAF_CHECK_EQUAL(probes->writes[rep.run_id + ":1"], 1);
  CAF_CHECK_EQUAL(queue.failed, 2);
}

CAF_TEST(a run whose creation cannot commit is reported unavailable and does not exist) {
  script({{"probe.write", R"({"action":"never"})"}});
  queue.fail_next = 1;
  auto rep = submit("store away");
  CAF_CHECK_EQUAL(rep.err.code, errc::unavailable);
  CAF_CHECK_EQUAL(rep.err.message, std::string{"store away (test)"});
  auto stats = db->stats();
  CAF_REQUIRE(stats.has_value());
  CAF_CHECK_EQUAL(stats->runs, 0);
  CAF_CHECK_EQUAL(probes->writes.size(), 0u);
}

CAF_TEST(the same idempotency key returns the same run) {
  script({{"probe.read", "{}"}});
  auto a = submit("same", 0, 0, "key-1");
  auto b = submit("same", 0, 0, "key-1");
  CAF_CHECK(a.created);
  CAF_CHECK(!b.created);
  CAF_CHECK_EQUAL(a.run_id, b.run_id);
  CAF_CHECK_EQUAL(probes->reads, 1);
}

CAF_TEST(cancelling a finished or unknown run is refused) {
  script({});
  auto rep = submit("done quickly");
  auto c = cancel(rep.run_id);
  CAF_CHECK_EQUAL(c.err.code, errc::conflict);
  auto u = cancel("run_01ARZ3NDEKTSV4RRFFQ69G5FAV");
  CAF_CHECK_EQUAL(c.err.code, errc::conflict);
  CAF_CHECK_EQUAL(u.err.code, errc::not_found);
}

CAF_TEST(a cancel that arrives while an intent commits stops the run before the side effect) {
  script({{"probe.write", R"({"action":"never"})"}});
  start_node();
  queue.hold = true;
  self->send(sup, submit_atom::value, make_request("to be cancelled", 0, 0, {}));
  run();
  release_and_run(); // the run is created; its first intent is now waiting for the disk
  CAF_REQUIRE_EQUAL(queue.held.size(), 1u);
  auto id = queue.held.front().first.update->id;
  auto pending = self->request(sup, caf::infinite, cancel_atom::value, id, std::string{"tester"});
  run();
  release_and_run(); // the intent commits; the actor sees the cancel before executing
  release_and_run(); // the cancellation commits
  kernel_reply c;
  pending.receive([&](kernel_reply& r) { c = r; },
                  [&](caf::error& e) { CAF_FAIL("cancel failed: " << caf::to_string(e)); });
  CAF_CHECK_EQUAL(c.err.code, errc::ok);
  CAF_CHECK_EQUAL(c.state, run_state::cancelled);
  CAF_CHECK_EQUAL(to_string(load(id).state), std::string{"cancelled"});
  CAF_CHECK_EQUAL(load(id).error, std::string{"cancelled by tester"});
  auto steps = load_steps(id);
  CAF_REQUIRE_EQUAL(steps.size(), 1u);
  CAF_CHECK_EQUAL(to_string(steps[0].state), std::string{"cancelled"});
  CAF_CHECK_EQUAL(probes->writes.size(), 0u);
  auto last = event_kinds(id).back();
  CAF_CHECK_EQUAL(last, std::string{"run.cancelled"});
}

CAF_TEST(cancelling a parked run commits the cancellation without an actor) {
  auto id = seed_interrupted_run("probe.write", R"({"action":"x"})");
  probes->cannot_tell = true;
  start_node(); // the run goes in doubt and parks
  CAF_REQUIRE_EQUAL(to_string(load(id).state), std::string{"waiting"});
  auto c = cancel(id);
  CAF_CHECK_EQUAL(c.err.code, errc::ok);
  CAF_CHECK_EQUAL(to_string(load(id).state), std::string{"cancelled"});
  auto evs = events_of(id);
  CAF_CHECK_EQUAL(evs.back().kind, std::string{"run.cancelled"});
  CAF_CHECK_EQUAL(evs.back().run_seq, evs[evs.size() - 2].run_seq + 1);
}

CAF_TEST(recovery re - runs an idempotent step whose outcome was lost) {
  auto id = seed_interrupted_run("probe.read", "{}");
  start_node();
  auto steps = load_steps(id);
  CAF_CHECK_EQUAL(to_string(steps[0].state), std::string{"succeeded"});
  CAF_CHECK_EQUAL(steps[0].attempts, 2);
  CAF_CHECK_EQUAL(probes->reads, 1);
  CAF_CHECK_EQUAL(to_string(load(id).state), std::string{"succeeded"});
}

CAF_TEST(recovery reconciles a mutating step that took effect and does not repeat it) {
  auto id = seed_interrupted_run("probe.write", R"({"action":"x"})");
  probes->writes[id + ":1"] = 1; // the side effect happened before the crash
  start_node();
  auto steps = load_steps(id);
  CAF_CHECK_EQUAL(to_string(steps[0].state), std::string{"succeeded"});
  CAF_CHECK_EQUAL(steps[0].attempts, 1);
  CAF_CHECK_EQUAL(probes->writes[id + ":1"], 1);
}

CAF_TEST(recovery executes a mutating step that never took effect exactly once) {
  auto id = seed_interrupted_run("probe.write", R"({"action":"x"})");
  start_node();
  CAF_CHECK_EQUAL(probes->writes[id + ":1"], 1);
  auto attempts = load_steps(id)[0].attempts;
  CAF_CHECK_EQUAL(attempts, 2);
}

CAF_TEST(recovery puts a step the tool cannot reconcile in doubt and parks the run) {
  auto id = seed_interrupted_run("probe.write", R"({"action":"x"})");
  probes->cannot_tell = true;
  start_node();
  auto r = load(id);
  CAF_CHECK_EQUAL(to_string(r.state), std::string{"waiting"});
  CAF_CHECK_EQUAL(to_string(r.waiting_for), std::string{"approval"});
  CAF_CHECK_EQUAL(to_string(load_steps(id)[0].state), std::string{"in_doubt"});
  CAF_CHECK_EQUAL(probes->writes.size(), 0u);
  auto last = event_kinds(id).back();
  CAF_CHECK_EQUAL(last, std::string{"run.waiting"});
}

CAF_TEST(a step waits while this node lease has lapsed and executes once it holds again) {
  using steady = std::chrono::steady_clock;
  rt->lease.renewed(steady::now() - std::chrono::seconds(10), std::chrono::seconds(1));
  script({{"probe.write", R"({"action":"a"})"}});
  // ask_kernel, not submit: the fixture's run() would fire the waiting step's timer forever.
  auto rep = ask_kernel(caf::make_message(submit_atom::value, make_request("lease", 0, 0, {})));
  advance_time(std::chrono::milliseconds(500));
  settle();
  auto waiting = load_steps(rep.run_id);
  CAF_REQUIRE_EQUAL(waiting.size(), 1u);
  CAF_CHECK_EQUAL(to_string(waiting[0].state), std::string{"intent"});
  CAF_CHECK_EQUAL(probes->writes[rep.run_id + ":1"], 0); // not executed past the lease
  rt->lease.renewed(steady::now(), std::chrono::seconds(60));
  advance_time(std::chrono::milliseconds(100));
  settle();
  auto r = load(rep.run_id);
  CAF_CHECK_EQUAL(to_string(r.state), std::string{"succeeded"});
  CAF_CHECK_EQUAL(probes->writes[rep.run_id + ":1"], 1);
  CAF_CHECK_EQUAL(probes->violations, 0);
}

CAF_TEST(a step whose run was claimed while the lease lapsed stops without executing) {
  using steady = std::chrono::steady_clock;
  rt->lease.renewed(steady::now() - std::chrono::seconds(10), std::chrono::seconds(1));
  script({{"probe.write", R"({"action":"a"})"}});
  // ask_kernel, not submit: the fixture's run() would fire the waiting step's timer forever.
  auto rep = ask_kernel(caf::make_message(submit_atom::value, make_request("claimed", 0, 0, {})));
  // Another node claims the run in the store meanwhile (as claim_orphans does on PostgreSQL).
  auto claimed = load(rep.run_id);
  claimed.node_id = "node-other";
  std::vector<persistence::write_batch> batches(1);
  batches[0].update = claimed;
  {
    scoped_thread_kind instrumentation{thread_kind::other};
    auto res = db->commit(batches);
    CAF_REQUIRE(!res.front().err);
  }
  rt->lease.renewed(steady::now(), std::chrono::seconds(60));
  advance_time(std::chrono::milliseconds(100));
  settle();
  CAF_CHECK_EQUAL(probes->writes[rep.run_id + ":1"], 0);
  auto steps = load_steps(rep.run_id);
  CAF_REQUIRE_EQUAL(steps.size(), 1u);
  CAF_CHECK_EQUAL(to_string(steps[0].state), std::string{"intent"}); // left for the owner
  auto r = load(rep.run_id);
  CAF_CHECK_EQUAL(r.node_id, std::string{"node-other"});
}

CAF_TEST_FIXTURE_SCOPE_END()
