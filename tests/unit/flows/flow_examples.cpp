#define CAF_SUITE flow_examples
#include <caf/test/unit_test.hpp>

#include <string>
#include <vector>

#include "config/flows/flow_file.hpp"
#include "core/base/json_schema.hpp"
#include "core/flows/graph.hpp"
#include "tests/support/sandbox_fixture.hpp"

using namespace sreh;

// Every flow of examples/flows loads against the sandbox's tools, and every tool step's
// arguments fit the tool's schema (placeholders stand where strings go).
CAF_TEST(the example flows are valid against the sandbox tools) {
  auto w =
    sandbox_fixture::make_world("  - {kind: bad_deploy, target: api, version: v1.3.0, at: -10m}\n");
  CAF_REQUIRE(w != nullptr);
  actors::tool_registry reg;
  sandbox_fixture::sb::add_sandbox_tools(reg, w);
  std::vector<std::string> names;
  for (const auto& t : reg.all())
    names.push_back(t->name());
  auto flows = config::load_flow_dir(SREH_SOURCE_DIR "/examples/flows", {&names});
  if (!flows)
    CAF_FAIL(flows.error().message);
  std::vector<std::string> loaded;
  for (const auto& f : *flows) {
    loaded.push_back(f.name);
    for (const auto* s : f.all_steps()) {
      std::vector<const flows::tool_call*> calls;
      if (const auto* c = std::get_if<flows::tool_call>(&s->body))
        calls.push_back(c);
      if (s->compensate)
        calls.push_back(&*s->compensate);
      for (const auto* c : calls) {
        auto err = json::validate(reg.find(c->tool)->schema(), c->args_json);
        if (err)
          CAF_FAIL(f.name << "/" << s->id << ": " << err.message);
      }
    }
    CAF_CHECK(flows::make_graph(f).cycle().empty());
  }
  CAF_CHECK_EQUAL(loaded, (std::vector<std::string>{"cert-rotation", "disk-cleanup",
                                                    "gpu-host-drain", "rollback-service"}));
}

// The issue asks for one example with a parallel block, an approval and a wait.
CAF_TEST(gpu host drain has a parallel block an approval and a wait) {
  auto f = config::load_flow_file(SREH_SOURCE_DIR "/examples/flows/gpu-host-drain.yaml");
  if (!f)
    CAF_FAIL(f.error().message);
  bool parallel = false, approval = false, wait = false;
  for (const auto* s : f->all_steps()) {
    parallel = parallel || s->kind() == flows::step_kind::parallel;
    approval = approval || s->kind() == flows::step_kind::approval;
    wait = wait || s->kind() == flows::step_kind::wait;
  }
  CAF_CHECK(parallel && approval && wait);
}
