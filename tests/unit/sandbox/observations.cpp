#define CAF_SUITE sandbox_observations
#include <algorithm>
#include <optional>
#include <string>
#include <variant>

#include "core/base/json_schema.hpp"
#include "plugins/tools/sandbox/contract.hpp"
#include "tests/support/caf_test.hpp"
#include "tests/support/sandbox_fixture.hpp"

using namespace sandbox_fixture;
namespace obs = sreh::obs;

// The sandbox tools as the first provider of typed observations: what each declares, and what
// it reads back from its own results (docs/sandbox-tools.md).
namespace {

struct fixture {
  std::shared_ptr<sb::world> w =
    make_world("  - {kind: bad_deploy, target: api, version: v1.3.0, at: -10m}\n");
  sreh::actors::tool_registry reg;
  fixture() { sb::add_sandbox_tools(reg, w); }

  /// Calls a tool and returns what it observes in its result.
  obs::observations seen(const std::string& name, const std::string& args) {
    auto t = reg.find(name);
    CAF_REQUIRE(t);
    CAF_REQUIRE(!sreh::json::validate(t->schema(), args));
    auto r = t->execute({"r", args, "k", {}});
    CAF_REQUIRE(r.ok);
    return t->observe(args, r.result);
  }

  /// The first observation of type T (a copy: `os` is often a temporary).
  template <class T>
  static std::optional<T> first(const obs::observations& os) {
    for (auto& o : os)
      if (auto* x = std::get_if<T>(&o))
        return *x;
    return std::nullopt;
  }

  static bool has_edge(const obs::topology& t, const std::string& from, obs::relation rel,
                       const std::string& to) {
    return std::any_of(t.edges.begin(), t.edges.end(), [&](const obs::edge& e) {
      return e.from == from && e.rel == rel && e.to == to;
    });
  }

  static const obs::entity_ref* entity(const obs::topology& t, const std::string& name) {
    for (auto& e : t.entities)
      if (e.name == name)
        return &e;
    return nullptr;
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(sandbox_observations_tests, fixture)

CAF_TEST(every tool declares what it provides) {
  using k = obs::capability_kind;
  auto kind_of = [&](const char* name) {
    auto caps = reg.find(name)->provides();
    CAF_REQUIRE_EQUAL(caps.size(), 1u);
    return caps.front();
  };
  CAF_CHECK_EQUAL(kind_of("topology.get").kind, k::topology);
  auto describe = kind_of("service.describe");
  CAF_CHECK_EQUAL(describe.kind, k::describe);
  CAF_CHECK(describe.covers("database") && !describe.covers("host"));
  CAF_CHECK_EQUAL(describe.argument(obs::role::entity).value_or(""), "service");
  CAF_CHECK_EQUAL(kind_of("host.describe").argument(obs::role::entity).value_or(""), "host");
  CAF_CHECK(!kind_of("jobs.list").argument(obs::role::entity)); // a listing
  CAF_CHECK_EQUAL(kind_of("logs.search").argument(obs::role::limit).value_or(""), "limit");
  CAF_CHECK_EQUAL(kind_of("metrics.query").argument(obs::role::entity).value_or(""), "target");
  CAF_CHECK_EQUAL(kind_of("deploys.list").argument(obs::role::window).value_or(""), "window");
  CAF_CHECK_EQUAL(kind_of("flags.list").kind, k::flags);
  CAF_CHECK_EQUAL(kind_of("alerts.list").kind, k::alerts);
  for (auto& t : reg.all()) {
    auto caps = t->provides();
    CAF_REQUIRE_EQUAL(caps.size(), 1u);
    // A tool that mutates performs the remedy action of its own name.
    CAF_CHECK_EQUAL(caps[0].kind == k::remedy, !t->idempotent());
    if (caps[0].kind == k::remedy)
      CAF_CHECK_EQUAL(caps[0].action, t->name());
  }
}

CAF_TEST(the topology lists entities in the order the result names them and every edge) {
  auto os = seen("topology.get", "{}");
  auto t = first<obs::topology>(os);
  CAF_REQUIRE(t);
  CAF_CHECK(t->complete);
  CAF_REQUIRE_GREATER_OR_EQUAL(t->entities.size(), 3u);
  CAF_CHECK_EQUAL(t->entities[0].name, "web");
  CAF_CHECK_EQUAL(t->entities[1].name, "api"); // web's dependency, named before the next service
  CAF_CHECK_EQUAL(entity(*t, "db")->kind, "database");
  CAF_CHECK_EQUAL(entity(*t, "g1")->kind, "host");
  CAF_CHECK_EQUAL(entity(*t, "g1")->subkind, "gpu");
  CAF_CHECK_EQUAL(entity(*t, "train")->kind, "job");
  CAF_CHECK(has_edge(*t, "web", obs::relation::calls, "api"));
  CAF_CHECK(has_edge(*t, "api", obs::relation::runs_on, "vm1"));
  CAF_CHECK(has_edge(*t, "train", obs::relation::job_on, "g1"));
}

CAF_TEST(a description observes the metrics and state and edges of its entity) {
  auto os = seen("service.describe", R"({"service":"db"})");
  auto t = first<obs::topology>(os);
  auto m = first<obs::metric_sample>(os);
  CAF_REQUIRE(t && m);
  CAF_CHECK(!t->complete);
  CAF_CHECK(has_edge(*t, "api", obs::relation::calls, "db"));
  CAF_CHECK_EQUAL(m->entity.name, "db");
  CAF_CHECK_EQUAL(m->entity.kind, "database");
  CAF_CHECK_EQUAL(m->fields.at("max_connections"), 100);
  CAF_CHECK_EQUAL(m->baseline.at("connections"), 20);
  CAF_CHECK(m->current.contains("connections"));
  auto host = first<obs::metric_sample>(seen("host.describe", R"({"host":"g1"})"));
  CAF_REQUIRE(host);
  CAF_CHECK_EQUAL(host->fields.at("gpus"), 8);
  CAF_CHECK_EQUAL(host->fields.at("cordoned"), 0);
  auto jobs = seen("jobs.list", "{}");
  auto job = first<obs::metric_sample>(jobs);
  CAF_REQUIRE(job);
  CAF_CHECK_EQUAL(job->entity.name, "train");
  CAF_CHECK(job->current.contains("stalled") && job->current.contains("throughput"));
  CAF_CHECK(has_edge(*first<obs::topology>(jobs), "train", obs::relation::job_on, "g1"));
}

CAF_TEST(queries logs and changes observe what they found) {
  auto m = first<obs::metric_sample>(
    seen("metrics.query", R"({"target":"api","metric":"error_rate","window":"15m"})"));
  CAF_REQUIRE(m);
  CAF_CHECK_EQUAL(m->current.size(), 1u);
  CAF_CHECK_GREATER(m->current.at("error_rate"), 0.2);
  CAF_CHECK(m->baseline.contains("error_rate"));
  CAF_CHECK(!m->at.empty());
  auto logs =
    first<obs::log_lines>(seen("logs.search", R"({"service":"api","limit":5,"window":"24h"})"));
  CAF_REQUIRE(logs);
  CAF_CHECK_EQUAL(logs->entity, "api");
  CAF_CHECK_EQUAL(logs->lines.size(), 5u);
  auto d = first<obs::deploy_list>(seen("deploys.list", R"({"service":"api"})"));
  CAF_REQUIRE(d);
  CAF_CHECK_EQUAL(d->service, "api");
  CAF_CHECK_EQUAL(d->window, "24h"); // the listing's default
  CAF_REQUIRE(!d->deploys.empty());
  CAF_CHECK_EQUAL(d->deploys[0].version, "v1.3.0");
  CAF_CHECK_EQUAL(d->deploys[0].previous, "v1.2.3");
  auto f = first<obs::flag_list>(seen("flags.list", "{}"));
  CAF_REQUIRE(f && f->flags.size() == 1u);
  CAF_CHECK_EQUAL(f->flags[0].name, "beta");
  CAF_CHECK_EQUAL(f->flags[0].value, "false");
  CAF_CHECK_EQUAL(f->flags[0].changed_at, "");
  auto a = first<obs::alert_list>(seen("alerts.list", "{}"));
  CAF_REQUIRE(a && a->alerts.size() == 1u);
  CAF_CHECK_EQUAL(a->alerts[0].name, "HighErrorRate");
  CAF_CHECK_EQUAL(a->alerts[0].labels.at("service"), "web");
}

CAF_TEST(a result that reports a failure or is not an object observes a failed call) {
  auto rollback = reg.find("deploy.rollback");
  CAF_CHECK(rollback->observe(R"({"service":"api"})", R"({"ok":true,"action":"x"})").empty());
  auto failed = rollback->observe(R"({"service":"api"})", R"({"ok":false,"error":"stuck"})");
  CAF_REQUIRE_EQUAL(failed.size(), 1u);
  CAF_CHECK_EQUAL(std::get<obs::call_failed>(failed[0]).reason, "stuck");
  auto junk = reg.find("service.describe")->observe(R"({"service":"api"})", "[1,2]");
  CAF_REQUIRE_EQUAL(junk.size(), 1u);
  CAF_CHECK(std::holds_alternative<obs::call_failed>(junk[0]));
}

CAF_TEST_FIXTURE_SCOPE_END()
