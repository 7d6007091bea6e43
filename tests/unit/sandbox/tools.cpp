#define CAF_SUITE sandbox_tools
#include <string>

#include "core/base/json.hpp"
#include "core/base/json_schema.hpp"
#include "tests/support/caf_test.hpp"
#include "tests/support/sandbox_fixture.hpp"

using namespace sandbox_fixture;
using sreh::actors::reconcile_result;
using sreh::actors::risk_class;
using sreh::actors::tool_call;

namespace {

struct fixture {
  std::shared_ptr<sb::world> w =
    make_world("  - {kind: bad_deploy, target: api, version: v1.3.0, at: -10m}\n");
  sreh::actors::tool_registry reg;
  fixture() { sb::add_sandbox_tools(reg, w); }

  /// Runs a tool after validating the arguments as the kernel does; "error: ..." on failure.
  std::string call(const std::string& name, const std::string& args, std::string key = "k") {
    auto t = reg.find(name);
    if (!t)
      return "error: no tool " + name;
    if (auto e = sreh::json::validate(t->schema(), args))
      return "invalid: " + e.message;
    tool_call c;
    c.run_id = "r";
    c.args = args;
    c.idempotency_key = std::move(key);
    auto r = t->execute(c);
    return r.ok ? r.result : "error: " + r.error;
  }

  bool contains(const std::string& s, const std::string& part) {
    return s.find(part) != std::string::npos;
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(sandbox_tools_tests, fixture)

CAF_TEST(every tool of the contract is registered with its risk) {
  CAF_CHECK_EQUAL(reg.all().size(), 19u);
  for (auto name : {"topology.get", "service.describe", "host.describe", "metrics.query",
                    "logs.search", "deploys.list", "flags.list", "jobs.list", "alerts.list"}) {
    auto t = reg.find(name);
    CAF_REQUIRE(t != nullptr);
    CAF_CHECK(t->idempotent());
    CAF_CHECK_EQUAL(t->risk(), risk_class::read_only);
    CAF_CHECK(sreh::json::parse_object(t->schema()).has_value());
  }
  CAF_CHECK_EQUAL(reg.find("host.drain")->risk(), risk_class::high);
  CAF_CHECK_EQUAL(reg.find("service.scale")->risk(), risk_class::low);
  CAF_CHECK_EQUAL(reg.find("deploy.rollback")->risk(), risk_class::medium);
  CAF_CHECK(!reg.find("service.restart")->idempotent());
}

CAF_TEST(schemas reject unknown and missing arguments) {
  CAF_CHECK(contains(call("service.describe", R"({})"), "invalid:"));
  CAF_CHECK(contains(call("service.describe", R"({"service":"api","x":1})"), "invalid:"));
  CAF_CHECK(contains(call("service.scale", R"({"service":"api","replicas":0})"), "invalid:"));
  CAF_CHECK(contains(call("logs.search", R"({"service":"api","level":"DEBUG"})"), "invalid:"));
  CAF_CHECK(contains(call("flag.set", R"({"flag":"beta","value":"no"})"), "invalid:"));
}

CAF_TEST(semantic errors name the argument) {
  CAF_CHECK_EQUAL(call("service.describe", R"({"service":"chekout"})"),
                  "error: unknown service 'chekout'");
  CAF_CHECK_EQUAL(call("service.describe", R"({"service":"vm1"})"),
                  "error: unknown service 'vm1' ('vm1' is a host)");
  CAF_CHECK_EQUAL(call("db.set_pool_limit", R"({"database":"api","limit":10})"),
                  "error: unknown database 'api' ('api' is a service)");
  CAF_CHECK_EQUAL(call("host.cleanup_disk", R"({"host":"api"})"),
                  "error: unknown host 'api' ('api' is a service)");
  CAF_CHECK(contains(call("metrics.query", R"({"target":"api","metric":"xid_errors"})"),
                     "unknown metric 'xid_errors' of service 'api'"));
  CAF_CHECK(contains(call("metrics.query", R"({"target":"api","metric":"rps","window":"1y"})"),
                     "window '1y'"));
  CAF_CHECK(contains(call("job.restart", R"({"job":"train","exclude_hosts":["nope"]})"),
                     "exclude_hosts: unknown host 'nope'"));
  CAF_CHECK(w->actions().empty());
}

CAF_TEST(read tools return the documented shapes) {
  auto topo = call("topology.get", "{}");
  CAF_CHECK(contains(topo, R"("name":"api","kind":"service")"));
  CAF_CHECK(contains(topo, R"("called_by":["web"])"));
  auto d = call("service.describe", R"({"service":"db"})");
  CAF_CHECK(contains(d, R"("max_connections":100)"));
  CAF_CHECK(contains(d, R"("current":{)"));
  auto mq = call("metrics.query", R"({"target":"api","metric":"error_rate","window":"15m"})");
  auto doc = sreh::json::parse(mq);
  CAF_REQUIRE(doc.has_value());
  CAF_CHECK_EQUAL((*doc)["points"].Size(), 15u);
  CAF_CHECK_GREATER((*doc)["current"].GetDouble(), 0.2);
  auto deploys = call("deploys.list", R"({"service":"api"})");
  CAF_CHECK(contains(deploys, R"("version":"v1.3.0","previous":"v1.2.3")"));
  CAF_CHECK(contains(call("flags.list", "{}"), R"("name":"beta","value":false,"default":false)"));
  CAF_CHECK(contains(call("jobs.list", "{}"), R"("name":"train")"));
  CAF_CHECK(contains(call("alerts.list", "{}"), R"("name":"HighErrorRate")"));
  CAF_CHECK(contains(call("host.describe", R"({"host":"g1"})"), R"("gpus":8)"));
}

CAF_TEST(logs are capped and filtered by level and text) {
  auto all = call("logs.search", R"({"service":"api","window":"24h","limit":200})");
  auto doc = sreh::json::parse(all);
  CAF_REQUIRE(doc.has_value());
  CAF_CHECK_EQUAL((*doc)["lines"].Size(), 200u);
  CAF_CHECK_GREATER((*doc)["total"].GetUint64(), 200u);
  auto errors = call("logs.search", R"({"service":"api","level":"ERROR","text":"UNHANDLED"})");
  doc = sreh::json::parse(errors);
  CAF_REQUIRE(doc.has_value());
  CAF_CHECK_GREATER((*doc)["lines"].Size(), 0u);
  for (const auto& l : (*doc)["lines"].GetArray())
    CAF_CHECK_EQUAL(std::string{l["level"].GetString()}, "ERROR");
  CAF_CHECK_EQUAL(call("logs.search", R"({"service":"nope"})"),
                  "error: unknown service, host or job 'nope'");
}

CAF_TEST(every call advances simulated time) {
  auto t0 = w->now();
  (void)call("topology.get", "{}");
  (void)call("service.restart", R"({"service":"web"})", "a");
  CAF_CHECK_EQUAL(w->now() - t0, 2 * sb::seconds_per_call);
}

CAF_TEST(the same idempotency key applies once) {
  auto first = call("service.scale", R"({"service":"api","replicas":5})", "run:3");
  auto again = call("service.scale", R"({"service":"api","replicas":9})", "run:3");
  CAF_CHECK_EQUAL(first, again);
  CAF_CHECK_EQUAL(w->actions().size(), 1u);
  CAF_CHECK(contains(call("service.describe", R"({"service":"api"})"), R"("replicas":5)"));
  CAF_CHECK(contains(first, R"("before":{"replicas":2},"after":{"replicas":5})"));
}

CAF_TEST(reconcile answers from the action log) {
  auto restart = reg.find("service.restart");
  CAF_CHECK_EQUAL(restart->reconcile("run:1").state, reconcile_result::not_happened);
  auto res = call("service.restart", R"({"service":"api"})", "run:1");
  auto r = restart->reconcile("run:1");
  CAF_CHECK_EQUAL(r.state, reconcile_result::happened);
  CAF_CHECK_EQUAL(r.result, res);
  CAF_CHECK_EQUAL(reg.find("topology.get")->reconcile("run:1").state, reconcile_result::unknown);
  // A failed call never happened.
  (void)call("service.restart", R"({"service":"nope"})", "run:2");
  CAF_CHECK_EQUAL(restart->reconcile("run:2").state, reconcile_result::not_happened);
}

CAF_TEST(undo compensates what can be compensated) {
  (void)call("deploy.rollback", R"({"service":"api"})", "rb");
  CAF_CHECK_LESS(m(*w, "api", "error_rate"), 0.01);
  CAF_CHECK(w->undo("rb").has_value());
  CAF_CHECK_GREATER(m(*w, "api", "error_rate"), 0.2); // the bad version is back
  CAF_CHECK(!w->undo("rb").has_value());              // only once
  (void)call("service.scale", R"({"service":"web","replicas":6})", "sc");
  CAF_CHECK(w->undo("sc").has_value());
  CAF_CHECK(contains(call("service.describe", R"({"service":"web"})"), R"("replicas":2)"));
  (void)call("flag.set", R"({"flag":"beta","value":true})", "fl");
  CAF_CHECK(w->undo("fl").has_value());
  CAF_CHECK(contains(call("flags.list", "{}"), R"("value":false)"));
  (void)call("host.cordon", R"({"host":"g1"})", "co");
  CAF_CHECK(w->undo("co").has_value());
  CAF_CHECK(contains(call("host.describe", R"({"host":"g1"})"), R"("cordoned":false)"));
  (void)call("service.restart", R"({"service":"web"})", "rs");
  auto no = w->undo("rs");
  CAF_REQUIRE(!no);
  CAF_CHECK_EQUAL(no.error().message, "service.restart on 'web' cannot be undone");
  CAF_CHECK(!w->undo("missing").has_value());
}

CAF_TEST(a rollback is not rolled back again without a version named) {
  auto first = call("deploy.rollback", R"({"service":"api"})", "rb1");
  CAF_CHECK(contains(first, R"("ok":true)"));
  CAF_CHECK_LESS(m(*w, "api", "error_rate"), 0.01);
  // Nothing was released since the rollback: a second one would redeploy the bad version.
  auto t = reg.find("deploy.rollback");
  tool_call c;
  c.run_id = "r";
  c.args = R"({"service":"api"})";
  c.idempotency_key = "rb2";
  auto again = t->execute(c);
  CAF_REQUIRE(!again.ok);
  CAF_CHECK(contains(again.error, "restored by a rollback"));
  CAF_CHECK(contains(again.result, R"("retryable":false)")); // a refusal: a flow does not retry
  CAF_CHECK_LESS(m(*w, "api", "error_rate"), 0.01);
  CAF_CHECK(contains(call("deploys.list", R"({"service":"api"})"), R"("rollback":true)"));
  // Naming the version is an operator's explicit choice, and goes through.
  CAF_CHECK(contains(call("deploy.rollback", R"({"service":"api","to_version":"v1.3.0"})", "rb3"),
                     R"("ok":true)"));
}

CAF_TEST(a reset brings the faults of the scenario back and remembers the keys it forgot) {
  (void)call("deploy.rollback", R"({"service":"api"})", "rb");
  CAF_CHECK_LESS(m(*w, "api", "error_rate"), 0.01);
  auto t0 = w->now();
  CAF_CHECK_EQUAL(w->reset(), 1);
  CAF_CHECK_GREATER(m(*w, "api", "error_rate"), 0.2); // the bad version runs again
  CAF_CHECK(w->actions().empty());
  CAF_CHECK_GREATER_OR_EQUAL(w->now(), t0); // world time never goes back
  // The forgotten call, retried, is not applied again: it answers as it did.
  auto again = call("deploy.rollback", R"({"service":"api"})", "rb");
  CAF_CHECK(contains(again, R"("ok":true)"));
  CAF_CHECK_GREATER(m(*w, "api", "error_rate"), 0.2);
  CAF_CHECK_EQUAL(reg.find("deploy.rollback")->reconcile("rb").state, reconcile_result::happened);
}

CAF_TEST_FIXTURE_SCOPE_END()
