#define CAF_SUITE core_quality
#include <fmt/format.h>

#include <string>
#include <vector>

#include "core/base/json.hpp"
#include "core/base/json_object.hpp"
#include "core/quality/quality.hpp"
#include "tests/support/caf_test.hpp"

using namespace sreh;

namespace {

step tool_step(std::int64_t n, std::string tool, std::string args,
               step_state state = step_state::succeeded, std::string effect = "allow") {
  step s;
  s.run_id = "run_q";
  s.n = n;
  s.kind = step_kind::tool;
  s.state = state;
  s.tool = std::move(tool);
  s.args = std::move(args);
  s.result = "{}";
  s.decision = json::object("thought", "look", "policy",
                            json::raw_text{json::object("effect", effect, "rule", "r")});
  return s;
}

/// The conclusion as the builtin writes it: `bad_deploy` on checkout with `evidence` (step
/// numbers; 0 is a prior), and `ruled_out` with the reason given.
step conclusion(std::int64_t n, std::vector<std::int64_t> evidence, std::string ruled_reason) {
  step s;
  s.run_id = "run_q";
  s.n = n;
  s.kind = step_kind::conclude;
  s.state = step_state::succeeded;
  s.result = json::object("conclusion", "checkout: bad_deploy");
  auto facts = json::array(evidence, [](json::writer& w, std::int64_t e) {
    json::write_object(w, "step", e, "fact", "a fact", "weight", 2);
  });
  auto ruled = ruled_reason.empty()
                 ? std::string{"[]"}
                 : json::array(std::vector<int>{1}, [&](json::writer& w, int) {
                     json::write_object(w, "target", "orders-db", "reason", ruled_reason);
                   });
  auto diagnosis =
    json::object("kind", "bad_deploy", "target", "checkout", "evidence", json::raw_text{facts});
  auto result =
    json::object("outcome", "diagnosed", "diagnoses", json::raw_text{"[" + diagnosis + "]"},
                 "ruled_out", json::raw_text{ruled});
  s.decision = json::object("thought", "conclude", "detail",
                            json::raw_text{json::object("result", json::raw_text{result})});
  return s;
}

run finished() {
  run r;
  r.id = "run_q";
  r.state = run_state::succeeded;
  r.budget.max_steps = 20;
  return r;
}

const outcome::mutating_fn mutating = [](std::string_view tool) {
  return tool == "deploy.rollback";
};

int part_score(const quality::score& s, const std::string& name) {
  for (const auto& p : s.parts)
    if (p.name == name)
      return p.score;
  CAF_FAIL("no part " << name);
  return -1;
}

std::string reasons(const quality::score& s) {
  std::string out;
  for (const auto& p : s.parts)
    for (const auto& r : p.reasons)
      out += p.name + ": " + r + "\n";
  return out;
}

} // namespace

CAF_TEST(a run that confirms scores higher than one that concludes without evidence) {
  std::vector<step> confirmed{tool_step(1, "service.describe", R"({"service":"checkout"})"),
                              tool_step(2, "deploys.list", "{}"),
                              conclusion(3, {1, 2, 0}, "step 1: connections well below max")};
  std::vector<step> unfounded{tool_step(1, "service.describe", R"({"service":"frontend"})"),
                              conclusion(2, {0}, "")};
  auto good = quality::of_run(finished(), confirmed, mutating);
  auto bad = quality::of_run(finished(), unfounded, mutating);
  CAF_MESSAGE("confirmed " << good.total << "\n" << reasons(good));
  CAF_MESSAGE("unfounded " << bad.total << "\n" << reasons(bad));
  CAF_CHECK_EQUAL(part_score(good, "evidence"), 100);
  CAF_CHECK_EQUAL(part_score(bad, "evidence"), 0);
  CAF_CHECK_EQUAL(part_score(good, "hypotheses"), 100);
  CAF_CHECK_EQUAL(part_score(bad, "hypotheses"), 40);
  CAF_CHECK_GREATER(good.total, bad.total);
  CAF_CHECK(reasons(good).find("bad_deploy on checkout: supported by steps 1, 2") !=
            std::string::npos);
  CAF_CHECK(reasons(bad).find("no step's result supports it") != std::string::npos);
  // A failed step is no support.
  confirmed[0].state = step_state::failed;
  confirmed[1].state = step_state::failed;
  CAF_CHECK_EQUAL(part_score(quality::of_run(finished(), confirmed, mutating), "evidence"), 0);
}

CAF_TEST(a repeated tool call loses points but a look after an action does not ) {
  std::vector<step> once{tool_step(1, "service.describe", R"({"service":"checkout"})"),
                         tool_step(2, "deploy.rollback", R"({"service":"checkout"})"),
                         tool_step(3, "service.describe", R"({"service":"checkout"})"),
                         conclusion(4, {1}, "step 1: fine")};
  std::vector<step> twice{tool_step(1, "service.describe", R"({"service":"checkout"})"),
                          tool_step(2, "service.describe", R"({"service":"checkout"})"),
                          tool_step(3, "deploy.rollback", R"({"service":"checkout"})"),
                          conclusion(4, {1}, "step 1: fine")};
  auto a = quality::of_run(finished(), once, mutating);
  auto b = quality::of_run(finished(), twice, mutating);
  CAF_CHECK_EQUAL(part_score(a, "waste"), 100);
  CAF_CHECK_EQUAL(part_score(b, "waste"), 75);
  CAF_CHECK(reasons(b).find("step 2 repeats step 1 (service.describe)") != std::string::npos);
  CAF_CHECK_GREATER(a.total, b.total);
}

CAF_TEST(a call repeated many times is one reason however often it was) {
  std::vector<step> loop;
  for (std::int64_t n = 1; n <= 10; ++n)
    loop.push_back(tool_step(n, "logs.search", R"({"service":"checkout"})"));
  loop.push_back(tool_step(11, "logs.search", R"({"service":"orders"})"));
  loop.push_back(tool_step(12, "logs.search", R"({"service":"orders"})"));
  loop.push_back(tool_step(13, "logs.search", R"({"service":"checkout"})"));
  auto s = quality::of_run(finished(), loop, mutating);
  const auto& waste = s.parts[2];
  CAF_REQUIRE_EQUAL(waste.reasons.size(), 2u);
  CAF_CHECK_EQUAL(waste.reasons[0],
                  "steps 2–10, 13 repeat step 1 (logs.search) with nothing changed between");
  CAF_CHECK_EQUAL(waste.reasons[1],
                  "step 12 repeats step 11 (logs.search) with nothing changed between");
  CAF_CHECK_EQUAL(waste.score, 0);
  // Past ten repeated calls the rest are counted, not listed: the stored score stays small.
  std::vector<step> many;
  for (std::int64_t i = 0; i < 15; ++i) {
    auto args = fmt::format(R"({{"service":"s{}"}})", i);
    many.push_back(tool_step(2 * i + 1, "logs.search", args));
    many.push_back(tool_step(2 * i + 2, "logs.search", args));
  }
  auto m = quality::of_run(finished(), many, mutating);
  CAF_REQUIRE_EQUAL(m.parts[2].reasons.size(), 11u);
  CAF_CHECK_EQUAL(m.parts[2].reasons.back(), "and 5 more call(s) repeated the same way");
}

CAF_TEST(denied proposals cost safety and a conclusion in words is judged by its citations) {
  std::vector<step> steps{
    tool_step(1, "logs.search", R"({"service":"checkout"})"),
    tool_step(2, "service.restart", R"({"service":"orders-db"})", step_state::failed, "deny")};
  step end;
  end.run_id = "run_q";
  end.n = 3;
  end.kind = step_kind::conclude;
  end.state = step_state::succeeded;
  end.result = json::object("conclusion", "checkout is wedged, as step 1 shows");
  steps.push_back(end);
  auto s = quality::of_run(finished(), steps, mutating);
  CAF_CHECK_EQUAL(part_score(s, "safety"), 60);
  CAF_CHECK(reasons(s).find("step 2: service.restart was proposed and the policy denied it") !=
            std::string::npos);
  CAF_CHECK_EQUAL(part_score(s, "evidence"), 100);
  CAF_CHECK_EQUAL(part_score(s, "hypotheses"), 50);
  steps.back().result = json::object("conclusion", "checkout is wedged");
  CAF_CHECK_EQUAL(part_score(quality::of_run(finished(), steps, mutating), "evidence"), 0);
  // The budget: 3 of 4 steps is past half.
  auto r = finished();
  r.budget.max_steps = 4;
  CAF_CHECK_EQUAL(part_score(quality::of_run(r, steps, mutating), "budget"), 50);
  // The JSON.
  auto doc = json::parse_object(json::build([&](json::writer& w) { quality::write_json(w, s); }));
  CAF_REQUIRE(doc.has_value());
  CAF_CHECK_EQUAL((*doc)["total"].GetInt(), s.total);
  CAF_CHECK_EQUAL((*doc)["parts"].Size(), 5u);
  CAF_CHECK_EQUAL(std::string{(*doc)["parts"][3]["name"].GetString()}, "safety");
}

CAF_TEST(a stored score reads back and a broken one is refused naming the field) {
  std::vector<step> steps{tool_step(1, "logs.search", R"({"service":"checkout"})")};
  auto s = quality::of_run(finished(), steps, mutating);
  auto back = quality::from_json(quality::to_json(s));
  CAF_REQUIRE(back.has_value());
  CAF_CHECK_EQUAL(back->total, s.total);
  CAF_REQUIRE_EQUAL(back->parts.size(), s.parts.size());
  CAF_CHECK_EQUAL(back->parts[2].name, "waste");
  CAF_CHECK(back->parts[2].reasons == s.parts[2].reasons);
  CAF_CHECK_EQUAL(quality::to_json(*back), quality::to_json(s));
  auto no_total = quality::from_json(R"({"parts":[]})");
  CAF_REQUIRE(!no_total.has_value());
  CAF_CHECK(no_total.error().message.find("total") != std::string::npos);
  auto bad_part = quality::from_json(R"({"total":50,"parts":[{"name":"x"}]})");
  CAF_REQUIRE(!bad_part.has_value());
  CAF_CHECK(bad_part.error().message.find("parts[0]") != std::string::npos);
  CAF_CHECK(!quality::from_json("not json").has_value());
}
