// The pure runner of flows (core/flows/runner.hpp): the next action from a flow and its journal.
#define CAF_SUITE flow_runner
#include <caf/test/unit_test.hpp>

#include <string>

#include "config/flows/flow_file.hpp"
#include "core/base/json.hpp"
#include "core/flows/runner.hpp"

using namespace sreh;
using namespace sreh::flows;

namespace {

flow load(const std::string& text) {
  auto f = config::load_flow_string(text, "f.yaml");
  if (!f)
    CAF_FAIL(f.error().message);
  return std::move(*f);
}

struct journal {
  explicit journal(flow fl) : f(std::move(fl)) {}
  flow f;
  std::map<std::string, std::string> inputs;
  std::map<std::string, step_result> prior;
  std::vector<record> records;
  timestamp_us now = 1'000'000;
  world_lookup world;

  action next() const {
    run_view v{f, "", "", inputs, prior, records, now, world};
    return next_action(v);
  }
  void done(const action& a, bool ok, std::string result = "{}", std::string error = {}) {
    record r;
    r.step = a.step;
    r.phase = a.phase;
    r.attempt = a.attempt;
    r.ok = ok;
    r.result = std::move(result);
    r.error = std::move(error);
    r.started_at = r.finished_at = now;
    records.push_back(std::move(r));
  }
};

} // namespace

CAF_TEST(placeholders in arguments are rendered into valid JSON) {
  journal j(load(R"(flow: f
inputs:
  who: {type: string}
steps:
  - {id: a, tool: t.x, args: {text: "hello ${inputs.who}", list: ["${inputs.who}"]}}
)"));
  j.inputs["who"] = json::quote(R"(a "quoted" \ name)");
  auto a = j.next();
  CAF_REQUIRE_EQUAL(a.kind, action::call_tool);
  auto doc = json::parse(a.args);
  CAF_REQUIRE(doc.has_value());
  CAF_CHECK_EQUAL(std::string{(*doc)["text"].GetString()}, R"(hello a "quoted" \ name)");
  CAF_CHECK_EQUAL(std::string{(*doc)["list"][0].GetString()}, R"(a "quoted" \ name)");
}

CAF_TEST(the same journal gives the same action) {
  journal j(load(R"(flow: f
steps:
  - {id: a, tool: t.x}
  - {id: b, wait: 5m}
)"));
  j.done(j.next(), true);
  auto first = j.next();
  auto again = j.next();
  CAF_CHECK_EQUAL(first.kind, action::sleep);
  CAF_CHECK_EQUAL(first.until_us, again.until_us);
  CAF_CHECK_EQUAL(first.until_us, j.now + 300'000'000);
}

CAF_TEST(naming the output of a skipped step fails the step) {
  journal j(load(R"(flow: f
steps:
  - {id: c, condition: "inputs.n > 1", then: b}
  - {id: a, tool: t.x}
  - {id: b, tool: t.y, args: {from: "${steps.a.output.v}"}}
inputs:
  n: {type: number}
)"));
  j.inputs.emplace("n", std::string{"5"});
  j.done(j.next(), true, R"({"then":"b"})");
  auto a = j.next();
  CAF_CHECK_EQUAL(a.kind, action::fail);
  CAF_CHECK(a.message.find("steps.a: the step was skipped, it has no output") != std::string::npos);
}

CAF_TEST(a wait until checks the world every interval and fails at its deadline) {
  journal j(load(R"(flow: f
steps:
  - id: w
    wait: {until: "world.db.disk_used < 0.8", deadline: 1m, every: 20s}
)"));
  double used = 0.95;
  j.world = [&](const std::string& e, const std::string& m) -> expected<expr::value> {
    if (e != "db" || m != "disk_used")
      return sreh::error{errc::not_found, "no"};
    return expr::value{used};
  };
  auto check = j.next();
  CAF_REQUIRE_EQUAL(check.kind, action::check);
  CAF_CHECK(check.result.find(R"("holds":false)") != std::string::npos);
  CAF_CHECK(check.result.find(R"("world.db.disk_used":0.95)") != std::string::npos);
  j.done(check, true, check.result);
  auto sleep = j.next();
  CAF_REQUIRE_EQUAL(sleep.kind, action::sleep);
  CAF_CHECK_EQUAL(sleep.until_us, j.now + 20'000'000);
  // Three more checks that do not hold, 20 s apart: the last one is at the deadline.
  for (int i = 0; i < 3; ++i) {
    j.done(sleep, true);
    j.now += 20'000'000;
    check = j.next();
    CAF_REQUIRE_EQUAL(check.kind, action::check);
    j.done(check, true, check.result);
    sleep = j.next();
  }
  CAF_CHECK_EQUAL(sleep.kind, action::fail);
  CAF_CHECK(sleep.message.find("did not hold within 60 s (4 checks)") != std::string::npos);
  // Had it held at the last check, the wait would have succeeded.
  j.records.pop_back();
  used = 0.5;
  auto held = j.next();
  j.done(held, true, held.result);
  CAF_CHECK_EQUAL(j.next().kind, action::succeed);
}

CAF_TEST(joins add up the runs of a step) {
  using e = child_end;
  auto all =
    join(join_mode::all, false, {e{"p/a", "r1", "succeeded", "", ""}, e{"p/b", "r2", "", "", ""}});
  CAF_CHECK(!all.decided);
  all =
    join(join_mode::all, false, {e{"p/a", "r1", "failed", "", "boom"}, e{"p/b", "r2", "", "", ""}});
  CAF_CHECK(all.decided && !all.ok);
  CAF_CHECK_EQUAL(all.cancel, std::vector<std::string>{"p/b"});
  CAF_CHECK(all.error.find("1 of 2 failed; first: p/a failed: boom") != std::string::npos);
  auto any = join(join_mode::any, false,
                  {e{"p/a", "r1", "failed", "", "x"}, e{"p/b", "r2", "succeeded", "done", ""},
                   e{"p/c", "r3", "", "", ""}});
  CAF_CHECK(any.decided && any.ok);
  CAF_CHECK_EQUAL(any.cancel, std::vector<std::string>{"p/c"});
  auto doc = json::parse(any.output);
  CAF_REQUIRE(doc.has_value());
  CAF_CHECK_EQUAL(std::string{(*doc)["b"]["conclusion"].GetString()}, "done");
  auto none = join(join_mode::any, false,
                   {e{"p/a", "r1", "failed", "", "x"}, e{"p/b", "r2", "cancelled", "", "y"}});
  CAF_CHECK(none.decided && !none.ok);
  auto goal = join(join_mode::all, true, {e{"g", "r1", "succeeded", "it was the deploy", ""}});
  CAF_CHECK_EQUAL(goal.output, R"("it was the deploy")");
}

CAF_TEST(a denial or a refusal is not retried and fails the step with its reason) {
  journal j(load(R"(flow: f
steps:
  - id: a
    tool: t.x
    retries: {max: 3, backoff: {initial: 10s}}
    on_failure: goto:b
  - {id: b, tool: t.y}
)"));
  auto a = j.next();
  CAF_REQUIRE_EQUAL(a.kind, action::call_tool);
  j.done(a, false, R"({"not_executed":"denied","retryable":false})",
         R"(not executed: denied by alice ("not now"))");
  j.records.back().final = true;
  auto next = j.next();
  // No backoff and no attempt 2: on_failure decides at once.
  CAF_REQUIRE_EQUAL(next.kind, action::call_tool);
  CAF_CHECK_EQUAL(next.step, "b");
  CAF_CHECK_EQUAL(next.attempt, 1);
}

CAF_TEST(a transient failure is still retried after its backoff) {
  journal j(load(R"(flow: f
steps:
  - id: a
    tool: t.x
    retries: {max: 3, backoff: {initial: 10s}}
)"));
  j.done(j.next(), false, "{}", "connection reset");
  auto backoff = j.next();
  CAF_REQUIRE_EQUAL(backoff.kind, action::sleep);
  CAF_CHECK_EQUAL(backoff.phase, phase::backoff);
  CAF_CHECK_EQUAL(backoff.until_us, j.now + 10'000'000);
}

CAF_TEST(a wait checks again soon while world state was not observed since the last action) {
  journal j(load(R"(flow: f
steps:
  - {id: act, tool: t.fix}
  - id: w
    wait: {until: "world.db.disk_used < 0.8", deadline: 1m, every: 20s}
)"));
  bool observed = false;
  j.world = [&](const std::string&, const std::string&) -> expected<expr::value> {
    if (!observed)
      return sreh::error{errc::unavailable, "world state not yet observed since the last action"};
    return expr::value{0.5};
  };
  j.done(j.next(), true);
  auto check = j.next();
  CAF_REQUIRE_EQUAL(check.kind, action::check);
  CAF_CHECK(check.ok); // not a failure: the check does not hold yet
  CAF_CHECK(check.result.find(R"("holds":false)") != std::string::npos);
  CAF_CHECK(check.result.find(R"("unobserved")") != std::string::npos);
  j.done(check, true, check.result);
  auto sleep = j.next();
  CAF_REQUIRE_EQUAL(sleep.kind, action::sleep);
  CAF_CHECK_EQUAL(sleep.until_us, j.now + 1'000'000); // world_retry_ms, not `every`
  j.done(sleep, true);
  j.now += 1'000'000;
  observed = true;
  auto second = j.next();
  CAF_REQUIRE_EQUAL(second.kind, action::check);
  CAF_CHECK(second.result.find(R"("holds":true)") != std::string::npos);
  CAF_CHECK(second.result.find(R"("world_version":0)") != std::string::npos);
}
