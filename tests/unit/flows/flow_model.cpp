#define CAF_SUITE flow_model
#include <caf/test/unit_test.hpp>

#include <string>

#include "config/flows/flow_file.hpp"
#include "core/flows/graph.hpp"
#include "core/flows/reference.hpp"

using namespace sreh;
using namespace sreh::flows;

namespace {

/// A flow with every step kind: a condition with a jump, a parallel block, a wait and a goto.
const std::string text = R"(flow: f
inputs:
  host: {type: string}
  limit: {type: number, default: 0.8}
steps:
  - id: look
    tool: host.describe
    args: {host: "${inputs.host}"}
  - id: full
    condition: "steps.look.output.current.disk_used > ${inputs.limit}"
    then: both
    else: done
  - id: both
    parallel:
      join: any
      branches:
        a:
          - {id: a1, tool: host.cleanup_disk, args: {host: "${inputs.host}"}}
          - {id: a2, wait: 1m}
        b:
          - {id: b1, goal: "free space on ${inputs.host}"}
  - id: check
    wait: {until: "world.${inputs.host}.disk_used < ${inputs.limit}", deadline: 5m}
    on_failure: goto:page
    next: done
  - id: page
    approval: {approvers: 2, roles: [approver], timeout: 1h}
  - id: done
    flow: other
)";

flow load() {
  auto f = config::load_flow_string(text, "f.yaml");
  if (!f)
    CAF_FAIL(f.error().message);
  return std::move(*f);
}

/// "from>to:label" of every edge, in order.
std::string edges(const graph& g) {
  std::string out;
  for (const auto& e : g.edges)
    out += (out.empty() ? "" : " ") + e.from + ">" + e.to + (e.label.empty() ? "" : ":" + e.label);
  return out;
}

std::string rendered(std::string_view t) {
  auto r = render(t, [](const reference& ref) -> expected<std::string> {
    if (ref.kind == reference::input && ref.name == "host")
      return std::string{"g1"};
    if (ref.kind == reference::step_output)
      return ref.name + ":" + (ref.path.empty() ? std::string{} : ref.path.back());
    return sreh::error{errc::invalid_argument, "no " + ref.name};
  });
  return r ? *r : r.error().message;
}

} // namespace

CAF_TEST(every step kind loads with its fields) {
  auto f = load();
  CAF_CHECK_EQUAL(f.inputs.size(), 2u);
  CAF_CHECK(f.inputs[0].required());
  CAF_CHECK_EQUAL(*f.inputs[1].default_json, std::string{"0.8"});
  CAF_REQUIRE_EQUAL(f.all_steps().size(), 9u);
  CAF_CHECK(f.find("look")->kind() == step_kind::tool);
  CAF_CHECK_EQUAL(std::get<tool_call>(f.find("look")->body).args_json,
                  std::string{R"({"host":"${inputs.host}"})"});
  const auto& c = std::get<condition_step>(f.find("full")->body);
  CAF_REQUIRE_EQUAL(c.cases.size(), 1u);
  CAF_CHECK_EQUAL(c.cases[0].then, std::string{"both"});
  CAF_CHECK_EQUAL(c.otherwise, std::string{"done"});
  const auto& p = std::get<parallel_step>(f.find("both")->body);
  CAF_CHECK(p.join == join_mode::any);
  CAF_REQUIRE_EQUAL(p.branches.size(), 2u);
  CAF_CHECK_EQUAL(p.branches[0].name, std::string{"a"});
  CAF_CHECK_EQUAL(std::get<wait_step>(f.find("a2")->body).duration_ms, 60'000);
  const auto& w = std::get<wait_step>(f.find("check")->body);
  CAF_CHECK_EQUAL(w.deadline_ms, 300'000);
  CAF_CHECK(f.find("check")->failure.action == failure_action::go_to);
  CAF_CHECK_EQUAL(f.find("check")->failure.text(), std::string{"goto:page"});
  const auto& a = std::get<approval_step>(f.find("page")->body);
  CAF_CHECK_EQUAL(a.approvers, 2);
  CAF_CHECK_EQUAL(a.timeout_ms, 3'600'000);
  CAF_CHECK(f.find("done")->kind() == step_kind::flow);
  CAF_CHECK(f.find("b1")->acts());
  CAF_CHECK(!f.find("page")->acts());
  CAF_CHECK_EQUAL(f.find("look")->pos.line, 6);
}

CAF_TEST(control goes on in file order unless next says otherwise) {
  auto f = load();
  CAF_CHECK_EQUAL(f.following("look"), std::string{"full"});
  CAF_CHECK_EQUAL(f.following("a1"), std::string{"a2"});
  CAF_CHECK_EQUAL(f.following("a2"), std::string{""}); // the branch ends
  CAF_CHECK_EQUAL(f.following("check"), std::string{"done"});
  CAF_CHECK_EQUAL(f.following("done"), std::string{""});
  auto where = f.locate("b1");
  CAF_REQUIRE(where.has_value());
  CAF_CHECK_EQUAL(where->parallel, std::string{"both"});
  CAF_CHECK_EQUAL(where->branch, std::string{"b"});
  CAF_CHECK_EQUAL(f.list_of(*where)->size(), 1u);
}

CAF_TEST(the graph has an edge for every way control can go) {
  auto g = make_graph(load());
  CAF_CHECK_EQUAL(g.nodes.size(), 9u);
  CAF_CHECK_EQUAL(edges(g), "look>full full>both:then full>done:else both>a1:branch a a1>a2 "
                            "a2>check:join any both>b1:branch b b1>check:join any check>done "
                            "check>page:on failure page>done");
  CAF_CHECK_EQUAL(g.node("a1")->parallel, std::string{"both"});
  CAF_CHECK_EQUAL(g.node("check")->label,
                  std::string{"wait until world.${inputs.host}.disk_used < ${inputs.limit} "
                              "(deadline 5m)"});
  CAF_CHECK_EQUAL(g.node("page")->label, std::string{"approval: 2 of approver"});
  CAF_CHECK(g.cycle().empty());
  CAF_CHECK(g.reaches("look", "done"));
  CAF_CHECK(g.reaches("a1", "page"));
  CAF_CHECK(!g.reaches("a1", "b1"));
  CAF_CHECK(!g.reaches("done", "look"));
}

CAF_TEST(a cycle is found with its path) {
  graph g;
  for (auto id : {"a", "b", "c"})
    g.nodes.push_back({id, step_kind::tool, "t", "", ""});
  g.edges = {{"a", "b", ""}, {"b", "c", ""}, {"c", "b", "on failure"}};
  auto c = g.cycle();
  CAF_REQUIRE_EQUAL(c.size(), 3u);
  CAF_CHECK_EQUAL(c[0] + c[1] + c[2], std::string{"bcb"});
}

CAF_TEST(references name inputs step outputs statuses and world state) {
  auto r = parse_reference("steps.look.output.current.disk_used");
  CAF_REQUIRE(r.has_value());
  CAF_CHECK(r->kind == reference::step_output);
  CAF_CHECK_EQUAL(r->name, std::string{"look"});
  CAF_REQUIRE_EQUAL(r->path.size(), 2u);
  CAF_CHECK_EQUAL(r->path[1], std::string{"disk_used"});
  CAF_CHECK(parse_reference("steps.look.output")->path.empty());
  CAF_CHECK(parse_reference("steps.look.status")->kind == reference::step_status);
  CAF_CHECK(parse_reference("inputs.host")->kind == reference::input);
  auto world = parse_reference("world.g1.disk_used");
  CAF_REQUIRE(world.has_value());
  CAF_CHECK_EQUAL(world->name, std::string{"g1"});
  for (auto bad :
       {"inputs", "inputs.a.b", "steps.x", "steps.x.result", "world.g1", "env.HOME", "inputs..a"})
    if (parse_reference(bad))
      CAF_FAIL("accepted " << bad);
}

CAF_TEST(placeholders are rendered and dollars escaped) {
  CAF_CHECK_EQUAL(rendered("drain ${inputs.host} now"), "drain g1 now");
  CAF_CHECK_EQUAL(rendered("v=${steps.look.output.version}"), "v=look:version");
  CAF_CHECK_EQUAL(rendered("costs $$5, $x stays"), "costs $5, $x stays");
  CAF_CHECK_EQUAL(rendered("${inputs.nope}"), "position 1: no nope");
  CAF_CHECK_EQUAL(rendered("a ${inputs.host"), "position 3: unclosed '${' (write $$ for a '$')");
  CAF_CHECK_EQUAL(rendered("${ }"), "position 1: empty '${}'");
  auto ph = placeholders("${inputs.a} and $${not} ${steps.b.status}");
  CAF_REQUIRE(ph.has_value());
  CAF_REQUIRE_EQUAL(ph->size(), 2u);
  CAF_CHECK_EQUAL((*ph)[1].path, std::string{"steps.b.status"});
  CAF_CHECK_EQUAL((*ph)[1].pos, 24u);
}

CAF_TEST(a placeholder in an expression stands for a name or a number only) {
  auto value = [](std::string v) {
    return [v](const reference&) -> expected<std::string> { return v; };
  };
  auto ok = render_expression("world.${inputs.host}.disk_used < 0.9", value("g-1"));
  CAF_CHECK_EQUAL(*ok, std::string{"world.g-1.disk_used < 0.9"});
  auto bad = render_expression("world.${inputs.host}.disk_used < 0.9", value("x.m > 0 or y"));
  CAF_REQUIRE(!bad);
  CAF_CHECK_EQUAL(bad.error().message, std::string{"position 7: '${inputs.host}' is 'x.m > 0 or "
                                                   "y', which is not a name or a number"});
}

CAF_TEST(retries back off up to their maximum) {
  retry_policy p{4, 1'000, 5'000, 2};
  CAF_CHECK_EQUAL(p.delay_ms(1), 1'000);
  CAF_CHECK_EQUAL(p.delay_ms(2), 2'000);
  CAF_CHECK_EQUAL(p.delay_ms(3), 4'000);
  CAF_CHECK_EQUAL(p.delay_ms(4), 5'000);
}
