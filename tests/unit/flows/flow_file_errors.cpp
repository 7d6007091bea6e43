#define CAF_SUITE flow_file_errors
#include <caf/test/unit_test.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "config/flows/flow_file.hpp"

using namespace sreh;

namespace {

/// A small valid flow; each test breaks one thing in it.
const std::string good = R"(flow: f
inputs:
  host: {type: string}
  limit: {type: number, default: 0.8}
  hosts: {type: list, default: [a, b]}
steps:
  - id: look
    tool: host.describe
    args: {host: "${inputs.host}"}
  - id: full
    condition: "steps.look.output.current.disk_used > ${inputs.limit}"
    then: clean
    else: end
  - id: clean
    tool: host.cleanup_disk
    args: {host: "${inputs.host}"}
  - id: freed
    wait: {until: "world.${inputs.host}.disk_used < 0.8", deadline: 5m}
)";

const std::vector<std::string> tools = {"host.describe", "host.cleanup_disk", "host.cordon"};

/// The error of loading `text` as f.yaml (with the tools above known), or "(ok)".
std::string err(const std::string& text) {
  auto f = config::load_flow_string(text, "f.yaml", {&tools});
  return f ? "(ok)" : f.error().message;
}

/// `good` with `from` (which must be in it) replaced by `to`.
std::string with(const std::string& from, const std::string& to) {
  auto text = good;
  auto at = text.find(from);
  if (at == std::string::npos)
    CAF_FAIL("not in the good flow: " << from);
  return text.replace(at, from.size(), to);
}

/// `good` with `steps` appended to its steps.
std::string plus(const std::string& steps) {
  return good + steps;
}

struct dir_fixture {
  std::filesystem::path dir =
    std::filesystem::temp_directory_path() / ("sreh-flows-" + std::to_string(::getpid()));
  dir_fixture() {
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
  }
  ~dir_fixture() { std::filesystem::remove_all(dir); }
  std::string write(const std::string& name, const std::string& text) {
    auto p = dir / name;
    std::ofstream{p} << text;
    return p.string();
  }
  std::string load() {
    auto r = config::load_flow_dir(dir.string());
    return r ? "(ok)" : r.error().message;
  }
};

} // namespace

CAF_TEST(the good flow loads) {
  CAF_CHECK_EQUAL(err(good), "(ok)");
}

CAF_TEST(unknown keys get a hint and wrong types say what was expected) {
  CAF_CHECK_EQUAL(err(with("steps:", "stpes:")),
                  "f.yaml:6:1: stpes: unknown key 'stpes' (did you mean 'steps'?)");
  CAF_CHECK_EQUAL(err(with("    tool: host.describe", "    tol: host.describe")),
                  "f.yaml:8:5: steps[0].tol: unknown key 'tol' (did you mean 'tool'?)");
  CAF_CHECK_EQUAL(err(with("{type: number, default: 0.8}", "{type: number, default: lots}")),
                  "f.yaml:4:34: inputs.limit.default: expected a number, got 'lots'");
  CAF_CHECK_EQUAL(err(with("{type: number,", "{type: float,")),
                  "f.yaml:4:17: inputs.limit.type: expected one of string, number, bool, duration, "
                  "list, got 'float'");
  CAF_CHECK_EQUAL(err(plus("  - {id: r, tool: host.cordon, retries: {max: many}}\n")),
                  "f.yaml:19:47: steps[4].retries.max: expected an integer, got 'many'");
  CAF_CHECK_EQUAL(err(plus("  - {id: r, tool: host.cordon, on_failure: retry}\n")),
                  "f.yaml:19:44: steps[4].on_failure: expected fail, continue, compensate or "
                  "goto:STEP, got 'retry'");
  CAF_CHECK_EQUAL(
    err(plus("  - {id: r, wait: soon}\n")),
    "f.yaml:19:19: steps[4].wait: expected a duration like 30s, 15m, 1h or 2d, got 'soon'");
}

CAF_TEST(a step has an id and exactly one kind) {
  CAF_CHECK_EQUAL(err(plus("  - {tool: host.cordon}\n")),
                  "f.yaml:19:5: steps[4]: missing key 'id'");
  CAF_CHECK_EQUAL(err(plus("  - {id: r, description: nothing}\n")),
                  "f.yaml:19:5: steps[4]: a step needs one of tool, goal, approval, condition, "
                  "parallel, wait, flow");
  CAF_CHECK_EQUAL(
    err(plus("  - {id: r, tool: host.cordon, goal: both}\n")),
    "f.yaml:19:38: steps[4].goal: a step has one kind, and this one is a tool step already");
  CAF_CHECK_EQUAL(err(plus("  - {id: r, goal: fix it, args: {a: 1}}\n")),
                  "f.yaml:19:33: steps[4].args: 'args' is for tool steps, and this is a goal "
                  "step");
  CAF_CHECK_EQUAL(err(plus("  - {id: r, wait: 1m, retries: {max: 1}}\n")),
                  "f.yaml:19:32: steps[4].retries: 'retries' is for tool, goal and flow steps, and "
                  "this is a wait step");
  CAF_CHECK_EQUAL(err(plus("  - {id: Bad.Id, wait: 1m}\n")),
                  "f.yaml:19:10: steps[4].id: step id 'Bad.Id': 1-64 letters, digits, '_' and '-', "
                  "starting with a letter or digit (and not 'end')");
}

CAF_TEST(step ids are unique) {
  CAF_CHECK_EQUAL(
    err(plus("  - {id: clean, wait: 1m}\n")),
    "f.yaml:19:10: steps[4].id: step id 'clean' is used twice (first at f.yaml:14:9)");
}

CAF_TEST(jumps name a step of their own list) {
  CAF_CHECK_EQUAL(err(with("then: clean", "then: claen")),
                  "f.yaml:12:11: steps[1].then: unknown step 'claen' (did you mean 'clean'?)");
  CAF_CHECK_EQUAL(err(plus("    next: nowhere\n")),
                  "f.yaml:19:11: steps[3].next: unknown step 'nowhere' (expected one of clean, "
                  "freed, full, look)");
  CAF_CHECK_EQUAL(err(plus("    on_failure: goto:lok\n")),
                  "f.yaml:19:17: steps[3].on_failure: unknown step 'lok' (did you mean "
                  "'look'?)");
  CAF_CHECK_EQUAL(
    err(plus("  - id: both\n    parallel:\n      branches:\n"
             "        a: [{id: a1, wait: 1m, next: look}]\n"
             "        b: [{id: b1, wait: 1m}]\n")),
    "f.yaml:22:38: steps[4].parallel.branches.a[0].next: step 'look' is in another list of steps: "
    "a jump stays in the list it is written in (the flow's steps, or one branch)");
  CAF_CHECK_EQUAL(err(plus("  - id: both\n    parallel:\n      branches:\n"
                           "        a: [{id: a1, wait: 1m}]\n")),
                  "f.yaml:21:7: steps[4].parallel: a parallel step needs at least two branches "
                  "(branches: {NAME: [steps], ...})");
}

CAF_TEST(the steps may not form a cycle) {
  CAF_CHECK_EQUAL(err(plus("    on_failure: goto:full\n")),
                  "f.yaml:17:9: steps[3].id: the steps form a cycle: full → clean → freed → "
                  "full (a flow is acyclic: retries repeat a step)");
  CAF_CHECK_EQUAL(err(with("    args: {host: \"${inputs.host}\"}\n  - id: full",
                           "    args: {host: \"${inputs.host}\"}\n    next: look\n  - id: full")),
                  "f.yaml:7:9: steps[0].id: the steps form a cycle: look → look (a flow is "
                  "acyclic: retries repeat a step)");
}

CAF_TEST(every step is reached) {
  CAF_CHECK_EQUAL(err(with("    args: {host: \"${inputs.host}\"}\n  - id: freed",
                           "    args: {host: \"${inputs.host}\"}\n    next: end\n  - id: freed")),
                  "f.yaml:18:9: steps[3].id: step 'freed' is never reached: no step goes on to "
                  "it (a jump or a 'next: end' before it passes it by)");
}

CAF_TEST(tools must be known when the loader is told which are) {
  CAF_CHECK_EQUAL(err(with("tool: host.cleanup_disk", "tool: host.cleanup")),
                  "f.yaml:15:11: steps[2].tool: unknown tool 'host.cleanup' (expected one of "
                  "host.describe, host.cleanup_disk, host.cordon)");
  auto f = config::load_flow_string(with("tool: host.cleanup_disk", "tool: host.wipe"), "f.yaml");
  CAF_REQUIRE(f.has_value()); // not checked without the tools
  auto e = config::check_flow_tools({*f}, tools);
  CAF_CHECK_EQUAL(e.message, "f.yaml:15:11: steps[2].tool: unknown tool 'host.wipe' (expected "
                             "one of host.describe, host.cleanup_disk, host.cordon)");
  CAF_CHECK(!config::check_flow_tools({*f}, {"host.describe", "host.wipe"}));
}

CAF_TEST(placeholders name inputs and steps that come before) {
  CAF_CHECK_EQUAL(err(with("{host: \"${inputs.host}\"}", "{host: \"${inputs.hots}\"}")),
                  "f.yaml:9:18: steps[0].args.host: in '${inputs.hots}': position 1: unknown input "
                  "'hots' (did you mean 'hosts'?)");
  CAF_CHECK_EQUAL(
    err(plus("  - {id: g, goal: \"see ${steps.later.output}\"}\n"
             "  - {id: later, wait: 1m}\n")),
    "f.yaml:19:19: steps[4].goal: in 'see ${steps.later.output}': position 5: step 'later' does "
    "not come before step 'g' (no path of the flow leads from it to here)");
  CAF_CHECK_EQUAL(
    err(plus("  - {id: g, goal: \"see ${env.HOME}\"}\n")),
    "f.yaml:19:19: steps[4].goal: in 'see ${env.HOME}': position 5: expected inputs.NAME, "
    "steps.ID.output[.FIELD...], steps.ID.status or world.ENTITY.METRIC, got 'env.HOME'");
  CAF_CHECK_EQUAL(err(plus("  - {id: g, goal: \"see ${inputs.host\"}\n")),
                  "f.yaml:19:19: steps[4].goal: in 'see ${inputs.host': position 5: unclosed '${' "
                  "(write $$ for a '$')");
}

CAF_TEST(expressions parse and compare values of one kind) {
  CAF_CHECK_EQUAL(err(with("steps.look.output.current.disk_used > ${inputs.limit}",
                           "steps.look.output.state == \\\"full\\\"")),
                  "(ok)"); // a step's output is typed only when it has run
  CAF_CHECK_EQUAL(err(with("steps.look.output.current.disk_used > ${inputs.limit}",
                           "inputs.limit == \\\"high\\\"")),
                  "f.yaml:11:16: steps[1].condition: in 'inputs.limit == \"high\"': position 1: "
                  "'inputs.limit' is a number, compared with a string");
  CAF_CHECK_EQUAL(
    err(with("steps.look.output.current.disk_used > ${inputs.limit}", "inputs.host > 3")),
    "f.yaml:11:16: steps[1].condition: in 'inputs.host > 3': position 1: "
    "'inputs.host' is a string, compared with a number");
  CAF_CHECK_EQUAL(
    err(with("steps.look.output.current.disk_used > ${inputs.limit}", "inputs.host < 'x'")),
    "f.yaml:11:16: steps[1].condition: in 'inputs.host < 'x'': position 13: '<' "
    "compares numbers; a string compares with == or !=");
  CAF_CHECK_EQUAL(
    err(with("steps.look.output.current.disk_used > ${inputs.limit}", "inputs.hosts == 1")),
    "f.yaml:11:16: steps[1].condition: in 'inputs.hosts == 1': position 1: "
    "'inputs.hosts' is a list, which cannot be compared");
  CAF_CHECK_EQUAL(
    err(with("steps.look.output.current.disk_used > ${inputs.limit}", "inputs.limt > 1")),
    "f.yaml:11:16: steps[1].condition: in 'inputs.limt > 1': position 1: unknown "
    "input 'limt' (did you mean 'limit'?)");
  CAF_CHECK_EQUAL(err(with("world.${inputs.host}.disk_used < 0.8", "world.x.disk_used <")),
                  "f.yaml:18:19: steps[3].wait.until: in 'world.x.disk_used <': position 20: "
                  "expected a number, a quoted string, true or false after '<'");
  CAF_CHECK_EQUAL(err(with("world.${inputs.host}.disk_used < 0.8", "world.x < 1")),
                  "f.yaml:18:19: steps[3].wait.until: in 'world.x < 1': position 1: expected "
                  "inputs.NAME, steps.ID.output[.FIELD...], steps.ID.status or "
                  "world.ENTITY.METRIC, got 'world.x'");
  CAF_CHECK_EQUAL(err(with(", deadline: 5m}", "}")),
                  "f.yaml:18:11: steps[3].wait: a wait until needs a deadline (how long to wait "
                  "at most)");
}

CAF_TEST(a folder checks the flows its steps call) {
  dir_fixture d;
  d.write("a.yaml", "flow: a\ninputs: {host: {type: string}}\nsteps:\n  - {id: w, wait: 1m}\n");
  auto b = d.write("b.yaml", "flow: b\nsteps:\n  - {id: call, flow: c}\n");
  CAF_CHECK_EQUAL(d.load(), b + ":3:22: steps[0].flow: unknown flow 'c' (expected one of a, b)");
  d.write("b.yaml", "flow: b\nsteps:\n  - {id: call, flow: a, inputs: {hots: x}}\n");
  CAF_CHECK_EQUAL(d.load(), b + ":3:22: steps[0].flow: flow 'a': unknown input 'hots' (did you "
                                "mean 'host'?)");
  d.write("b.yaml", "flow: b\nsteps:\n  - {id: call, flow: a}\n");
  CAF_CHECK_EQUAL(d.load(),
                  b + ":3:22: steps[0].flow: flow 'a' needs input 'host' (it has no default)");
  d.write("b.yaml", "flow: b\nsteps:\n  - {id: call, flow: a, inputs: {host: 7}}\n");
  CAF_CHECK_EQUAL(d.load(),
                  b + ":3:22: steps[0].flow: flow 'a': inputs.host: expected a string, got number");
  d.write("b.yaml", "flow: b\nsteps:\n  - {id: call, flow: a, inputs: {host: h}}\n");
  CAF_CHECK_EQUAL(d.load(), "(ok)");
  d.write("a.yaml", "flow: a\nsteps:\n  - {id: back, flow: b}\n");
  d.write("b.yaml", "flow: b\nsteps:\n  - {id: call, flow: a}\n");
  CAF_CHECK_EQUAL(d.load(), d.dir.string() + ": flows call each other in a circle: a → b → a");
  d.write("b.yaml", "flow: a\nsteps:\n  - {id: w, wait: 1m}\n");
  CAF_CHECK_EQUAL(d.load(), b + ": flow 'a' is also defined in " + (d.dir / "a.yaml").string());
}

CAF_TEST(a flow file is told apart from other YAML) {
  CAF_CHECK(config::looks_like_flow(good));
  CAF_CHECK(!config::looks_like_flow("template: x\n"));
  CAF_CHECK(!config::looks_like_flow("not: [valid"));
}
