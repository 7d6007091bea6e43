// world.get (actors/works/world_tool.hpp): world state as a read-only tool.
#define CAF_SUITE world_tool
#include "actors/works/world_tool.hpp"

#include <caf/test/unit_test.hpp>

#include "core/base/json.hpp"

using namespace sreh;
using namespace sreh::actors;

namespace {

world::entity make(const std::string& id, const std::string& kind,
                   std::vector<std::string> deps = {}) {
  world::entity e;
  e.id = id;
  e.kind = kind;
  e.metrics["error_rate"] = 0.5;
  e.depends_on = std::move(deps);
  return e;
}

std::vector<std::string> ids(const tool_result& r) {
  std::vector<std::string> out;
  auto doc = json::parse(r.result);
  for (const auto& e : (*doc)["entities"].GetArray())
    out.push_back(e["id"].GetString());
  return out;
}

} // namespace

CAF_TEST(world get returns the graph or one entity with its neighbours) {
  auto view = std::make_shared<world_view>();
  auto tool = make_world_tool(view);
  CAF_CHECK_EQUAL(tool->risk(), risk_class::read_only);
  auto none = tool->execute({"run_x", "{}", "k", {}});
  CAF_CHECK(!none.ok); // nothing observed yet
  auto snap = std::make_shared<world_snapshot>();
  snap->entities = {make("checkout", "service", {"db", "host-1"}), make("db", "database"),
                    make("frontend", "service", {"checkout"}), make("host-1", "host"),
                    make("search", "service")};
  snap->world_at = 1'000'000;
  view->set(snap);
  CAF_CHECK_EQUAL(ids(tool->execute({"run_x", "{}", "k", {}})).size(), 5u);
  CAF_CHECK_EQUAL(ids(tool->execute({"run_x", R"({"entity":"checkout"})", "k", {}})),
                  (std::vector<std::string>{"checkout", "db", "frontend", "host-1"}));
  CAF_CHECK_EQUAL(ids(tool->execute({"run_x", R"({"kind":"service"})", "k", {}})),
                  (std::vector<std::string>{"checkout", "frontend", "search"}));
  auto missing = tool->execute({"run_x", R"({"entity":"nope"})", "k", {}});
  CAF_CHECK(!missing.ok);
  CAF_CHECK_EQUAL(missing.error, "world.get: world state has no entity 'nope'");
}

CAF_TEST(world get is the topology a reasoner reads) {
  auto view = std::make_shared<world_view>();
  auto tool = make_world_tool(view);
  auto caps = tool->provides();
  CAF_REQUIRE_EQUAL(caps.size(), 1u);
  CAF_CHECK(caps[0].kind == obs::capability_kind::topology);
  auto snap = std::make_shared<world_snapshot>();
  auto gpu = make("gpu-1", "gpu_node");
  auto job = make("train", "job", {"gpu-1"});
  job.props["type"] = "training";
  snap->entities = {make("checkout", "service", {"db", "host-1"}),
                    make("db", "database"),
                    make("host-1", "host"),
                    make("flag-x", "flag"),
                    gpu,
                    job};
  view->set(snap);
  auto r = tool->execute({"run_x", "{}", "k", {}});
  auto seen = tool->observe("{}", r.result);
  CAF_REQUIRE_EQUAL(seen.size(), 1u);
  const auto* t = std::get_if<obs::topology>(&seen[0]);
  CAF_REQUIRE(t != nullptr);
  CAF_CHECK(t->complete);
  std::vector<std::string> kinds;
  for (const auto& e : t->entities)
    kinds.push_back(e.name + ":" + e.kind + "/" + e.subkind);
  // Flags are no entity of the graph; GPU nodes are hosts.
  CAF_CHECK_EQUAL(kinds,
                  (std::vector<std::string>{"checkout:service/", "db:database/", "host-1:host/vm",
                                            "gpu-1:host/gpu", "train:job/training"}));
  std::vector<std::string> edges;
  for (const auto& e : t->edges)
    edges.push_back(e.from +
                    (e.rel == obs::relation::calls     ? " calls "
                     : e.rel == obs::relation::runs_on ? " runs_on "
                                                       : " job_on ") +
                    e.to);
  CAF_CHECK_EQUAL(edges, (std::vector<std::string>{"checkout calls db", "checkout runs_on host-1",
                                                   "train job_on gpu-1"}));
  auto one = tool->execute({"run_x", R"({"entity":"db"})", "k", {}});
  auto partial = tool->observe(R"({"entity":"db"})", one.result);
  CAF_REQUIRE_EQUAL(partial.size(), 1u);
  CAF_CHECK(!std::get<obs::topology>(partial[0]).complete);
}
