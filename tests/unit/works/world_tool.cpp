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
