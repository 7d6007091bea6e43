#define CAF_SUITE reasoner_sandbox
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "actors/tools/tool.hpp"
#include "core/base/json.hpp"
#include "plugins/models/builtin/reasoner.hpp"
#include "plugins/tools/sandbox/scenario.hpp"
#include "plugins/tools/sandbox/world.hpp"
#include "tests/support/caf_test.hpp"

using namespace sreh;
namespace fs = std::filesystem;
namespace sb = sreh::plugins::sandbox;

// The reasoner against the real sandbox tools on the scenario files: it knows nothing of them but
// what the tools return, and is scored the way the eval suites score it.
namespace {

fs::path repo_root() {
  return fs::path{SREH_SOURCE_DIR};
}

std::vector<fs::path> scenario_files(const fs::path& dir) {
  std::vector<fs::path> out;
  if (!fs::exists(dir))
    return out;
  for (auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() != ".yaml")
      continue;
    std::ifstream in(e.path());
    std::stringstream text;
    text << "\n" << in.rdbuf();
    if (text.str().find("\nscenario:") != std::string::npos)
      out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string labels_of(const sb::scenario& sc) {
  rapidjson::StringBuffer buf;
  json::writer w(buf);
  w.StartObject();
  if (!sc.alert.name.empty()) {
    w.Key("alert");
    w.String(sc.alert.name.c_str());
  }
  for (auto& [k, v] : sc.alert.labels) {
    w.Key(k.c_str());
    w.String(v.c_str());
  }
  w.EndObject();
  return buf.GetString();
}

std::set<std::string> strings(const rapidjson::Value& a) {
  std::set<std::string> out;
  for (auto& v : a.GetArray())
    out.insert(v.GetString());
  return out;
}

/// The first string argument of a call ("tool:target" as `forbidden` names actions).
std::string action_name(const step& s) {
  auto args = json::parse(s.args);
  if (args && args->IsObject())
    for (auto& m : args->GetObject())
      if (m.value.IsString())
        return s.tool + ":" + m.value.GetString();
  return s.tool;
}

struct score {
  bool concluded = false, detected = false, localized = false, root_cause = false;
  bool mitigated = false, safe = true;
  std::size_t steps = 0;
  std::string conclusion;
};

score run_scenario(const fs::path& file) {
  score out;
  auto sc = sb::load_scenario(file.string());
  if (!sc) {
    CAF_FAIL("cannot load " << file << ": " << sc.error().message);
    return out;
  }
  auto expect = sc->expect;
  run r;
  r.id = "run_" + sc->id;
  r.goal = sc->goal;
  r.labels = labels_of(*sc);
  r.budget.max_steps = 40;
  auto w = std::make_shared<sb::world>(std::move(*sc));
  actors::tool_registry reg;
  sb::add_sandbox_tools(reg, w);
  auto provider = plugins::make_builtin_reasoner("");
  CAF_REQUIRE(provider.has_value());
  std::vector<step> steps;
  actors::run_memory_ptr memory;
  actors::decision d;
  for (int i = 0; i < 40; ++i) {
    d = (*provider)->decide({r, steps, reg, &memory});
    // The evidence kept between decisions gives the decision rebuilt from every step.
    auto rebuilt = (*provider)->decide({r, steps, reg});
    CAF_CHECK_EQUAL(d.tool, rebuilt.tool);
    CAF_CHECK_EQUAL(d.args, rebuilt.args);
    CAF_CHECK_EQUAL(d.detail, rebuilt.detail);
    if (d.kind != actors::decision::call_tool)
      break;
    step s;
    s.run_id = r.id;
    s.n = static_cast<std::int64_t>(steps.size()) + 1;
    s.tool = d.tool;
    s.args = d.args;
    s.idempotency_key = fmt::format("{}:{}", r.id, s.n);
    auto t = reg.find(d.tool);
    CAF_REQUIRE(t != nullptr);
    auto res = t->execute({r.id, s.args, s.idempotency_key, {}});
    s.state = res.ok ? step_state::succeeded : step_state::failed;
    s.result = res.ok ? res.result : "";
    s.error = res.error;
    CAF_MESSAGE("  step " << s.n << ": " << s.tool << " " << s.args << (res.ok ? "" : " FAILED: ")
                          << res.error);
    steps.push_back(std::move(s));
  }
  out.steps = steps.size();
  if (d.kind != actors::decision::conclude)
    return out;
  out.concluded = true;
  out.conclusion = d.conclusion;
  auto detail = json::parse_object(d.detail);
  CAF_REQUIRE(detail.has_value());
  auto& res = (*detail)["result"];
  out.detected = res["detected"].GetBool() == expect.detected;
  std::set<std::string> want_causes;
  for (auto k : expect.root_cause)
    if (k != sb::fault_kind::none)
      want_causes.insert(sb::to_string(k));
  out.localized = strings(res["localized"]) ==
                  std::set<std::string>(expect.localized.begin(), expect.localized.end());
  out.root_cause = strings(res["root_cause"]) == want_causes;
  if (expect.mitigated.empty()) {
    out.mitigated = std::none_of(steps.begin(), steps.end(), [](auto& s) {
      return s.tool.find("describe") == std::string::npos &&
             s.tool.find(".list") == std::string::npos && s.tool != "topology.get" &&
             s.tool != "logs.search" && s.tool != "metrics.query";
    });
  } else {
    auto m = w->evaluate(expect.mitigated);
    out.mitigated = m && *m;
  }
  for (auto& s : steps)
    for (auto& f : expect.forbidden)
      if (action_name(s) == f)
        out.safe = false;
  out.steps = steps.size();
  return out;
}

std::string report(const fs::path& file, const score& s) {
  return fmt::format("{:<40} concluded={} detected={} localized={} root_cause={} mitigated={} "
                     "safe={} steps={} | {}",
                     file.filename().string(), s.concluded, s.detected, s.localized, s.root_cause,
                     s.mitigated, s.safe, s.steps, s.conclusion);
}

} // namespace

CAF_TEST(the reasoner solves the test scenarios with the real sandbox tools) {
  auto files = scenario_files(repo_root() / "tests" / "scenarios");
  CAF_REQUIRE(!files.empty());
  for (auto& f : files) {
    auto sc = sb::load_scenario(f.string());
    CAF_REQUIRE(sc.has_value());
    auto s = run_scenario(f);
    CAF_MESSAGE(report(f, s));
    CAF_CHECK(s.concluded);
    CAF_CHECK(s.detected);
    CAF_CHECK(s.localized);
    CAF_CHECK(s.root_cause);
    CAF_CHECK(s.mitigated);
    CAF_CHECK(s.safe);
    CAF_CHECK_LESS_OR_EQUAL(s.steps, static_cast<std::size_t>(sc->expect.max_steps));
  }
}

CAF_TEST(the example scenarios are scored for the record) {
  // The example suites belong to the demo and the evals and change with them: the run must
  // conclude safely on each; the scores are printed (the eval suite is where they are gated).
  auto files = scenario_files(repo_root() / "examples" / "scenarios");
  int solved = 0;
  for (auto& f : files) {
    auto s = run_scenario(f);
    CAF_MESSAGE(report(f, s));
    CAF_CHECK(s.concluded);
    CAF_CHECK(s.safe);
    solved += s.detected && s.localized && s.root_cause && s.mitigated ? 1 : 0;
  }
  CAF_MESSAGE("examples solved: " << solved << " of " << files.size());
}
