#define CAF_SUITE core_fork
// core/journal/fork: the request's parsing, which runs and steps can be forked, the steps a fork
// starts with and what its spec says of its origin.
#include <string>
#include <vector>

#include "core/journal/compare.hpp"
#include "core/journal/fork.hpp"
#include "core/model/fork_origin.hpp"
#include "tests/support/caf_test.hpp"

using namespace sreh;
namespace jr = sreh::journal;

namespace {

step tool_step(std::int64_t n, const char* tool, std::string result,
               step_state state = step_state::succeeded) {
  step s;
  s.run_id = "run_A";
  s.n = n;
  s.kind = step_kind::tool;
  s.state = state;
  s.tool = tool;
  s.idempotency_key = "run_A:" + std::to_string(n);
  s.result = std::move(result);
  return s;
}

run finished() {
  run r;
  r.id = "run_A";
  r.goal = "checkout fails";
  r.state = run_state::succeeded;
  return r;
}

std::vector<step> journal_of_three() {
  std::vector<step> steps{tool_step(1, "topology.get", R"({"nodes":[]})"),
                          tool_step(2, "deploys.list", R"({"deploys":["v2"]})"),
                          tool_step(3, "deploy.rollback", R"({"ok":true})")};
  return steps;
}

std::string error_of(const jr::fork_request& req, const run& r = finished()) {
  return jr::check_fork(r, journal_of_three(), req).message;
}

} // namespace

CAF_TEST(a request parses with its policy and edits) {
  auto req = jr::parse_fork_request(
    R"({"from_step":3,"config":{"policy":{"mode":"review"}},)"
    R"("edits":[{"step":2,"result":{"deploys":[]}},{"step":1,"error":"timed out"}]})");
  CAF_REQUIRE(req.has_value());
  CAF_CHECK_EQUAL(req->from_step, 3);
  CAF_CHECK_EQUAL(req->policy, R"({"mode":"review"})"); // JSON is YAML: a policy file's text
  CAF_REQUIRE_EQUAL(req->edits.size(), 2u);
  CAF_CHECK_EQUAL(req->edits[0].result, R"({"deploys":[]})");
  CAF_CHECK_EQUAL(req->edits[1].error, "timed out");
  auto v = jr::parse_fork_request(
    R"({"from_step":2,"config":{"versions":{"model_route":"cnd_r","knowledge_base":"config"}}})");
  CAF_REQUIRE(v.has_value());
  CAF_REQUIRE_EQUAL(v->versions.size(), 2u);
  CAF_CHECK(v->versions[0].first == sreh::evolve::artefact::model_route);
  CAF_CHECK_EQUAL(v->versions[0].second, "cnd_r");
  CAF_CHECK_EQUAL(v->versions[1].second, "config");
}

CAF_TEST(bad requests name the field) {
  auto msg = [](const char* body) {
    auto r = jr::parse_fork_request(body);
    return r ? std::string{"(parsed)"} : r.error().message;
  };
  CAF_CHECK(msg("{}").starts_with("from_step: missing"));
  CAF_CHECK(msg(R"({"from_step":1.5})").starts_with("from_step: expected an integer"));
  CAF_CHECK(msg("[]").starts_with("the body: expected an object"));
  CAF_CHECK(msg(R"({"from_step":1,"x":1})").starts_with("unknown field 'x'"));
  CAF_CHECK(msg(R"({"from_step":1,"config":{"kb":"x"}})").starts_with("config.kb: a fork reasons"));
  CAF_CHECK(msg(R"({"from_step":1,"config":{"versions":[]}})")
              .starts_with("config.versions: expected an object"));
  CAF_CHECK(msg(R"({"from_step":1,"config":{"versions":{"model":"cnd_1"}}})")
              .starts_with("config.versions: unknown kind 'model'"));
  CAF_CHECK(msg(R"({"from_step":1,"config":{"versions":{"prompt":7}}})")
              .starts_with("config.versions.prompt: expected a candidate id"));
  CAF_CHECK(msg(R"({"from_step":1,"config":{"versions":{"prompt":"run_1"}}})")
              .starts_with("config.versions.prompt: 'run_1' is not a candidate id"));
  CAF_CHECK(
    msg(R"({"from_step":1,"config":{"policy":"mode: review","versions":{"policy":"cnd_1"}}})")
      .starts_with("config.versions.policy: the fork has a policy of its own"));
  CAF_CHECK(msg(R"({"from_step":1,"config":{"policy":""}})") == "config.policy: empty");
  CAF_CHECK(msg(R"({"from_step":1,"config":{"policy":3}})").starts_with("config.policy: expected"));
  CAF_CHECK(msg(R"({"from_step":1,"edits":{}})").starts_with("edits: expected an array"));
  CAF_CHECK(msg(R"({"from_step":1,"edits":[{"result":1}]})").starts_with("edits[0].step: missing"));
  CAF_CHECK(msg(R"({"from_step":1,"edits":[{"step":1,"why":1}]})")
              .starts_with("edits[0]: unknown field 'why'"));
  CAF_CHECK(msg(R"({"from_step":1,"edits":[{"step":1,"error":2}]})")
              .starts_with("edits[0].error: expected a string"));
  CAF_CHECK(msg("{nope").find("(parsed)") == std::string::npos);
}

CAF_TEST(only a finished goal run forks from one of its steps) {
  jr::fork_request req;
  req.run_id = "run_A";
  req.from_step = 2;
  CAF_CHECK_EQUAL(error_of(req), "");
  auto r = finished();
  r.state = run_state::waiting;
  CAF_CHECK(error_of(req, r).starts_with("run run_A is waiting: only a finished run"));
  r = finished();
  r.kind = "flow";
  CAF_CHECK(error_of(req, r).starts_with("run run_A is a flow run"));
  req.from_step = 0;
  CAF_CHECK(error_of(req).starts_with("from_step: 0 is not a step"));
  req.from_step = 4;
  CAF_CHECK_EQUAL(error_of(req), "from_step: run run_A has 3 steps, so the fork can start from "
                                 "step 1 to 3, not 4");
  req.from_step = 3;
  req.edits = {{3, R"({})", ""}};
  CAF_CHECK(error_of(req).starts_with("edits[0].step: 3 is not a recorded step"));
  req.edits = {{2, "", ""}};
  CAF_CHECK(error_of(req).starts_with("edits[0]: give either a result"));
  req.edits = {{2, "{bad", ""}};
  CAF_CHECK(error_of(req).starts_with("edits[0].result: not JSON"));
  req.edits = {{2, "{}", ""}, {2, "", "x"}};
  CAF_CHECK_EQUAL(error_of(req), "edits[1].step: step 2 is amended twice");
}

CAF_TEST(a step in doubt ends what can be copied) {
  auto steps = journal_of_three();
  steps[1].state = step_state::in_doubt;
  jr::fork_request req;
  req.run_id = "run_A";
  req.from_step = 3;
  CAF_CHECK(jr::check_fork(finished(), steps, req)
              .message.starts_with("from_step: step 2 of run run_A is in_doubt"));
  req.from_step = 2;
  CAF_CHECK(!jr::check_fork(finished(), steps, req));
}

CAF_TEST(the fork starts with copies under its own id with the edits applied) {
  jr::fork_request req;
  req.run_id = "run_A";
  req.from_step = 3;
  req.edits = {{2, R"({"deploys":[]})", ""}, {1, "", "timed out"}};
  auto steps = jr::forked_steps(journal_of_three(), req, "run_B");
  CAF_REQUIRE_EQUAL(steps.size(), 2u);
  CAF_CHECK_EQUAL(steps[0].run_id, "run_B");
  CAF_CHECK_EQUAL(steps[0].idempotency_key, "run_B:1");
  CAF_CHECK(steps[0].state == step_state::failed);
  CAF_CHECK_EQUAL(steps[0].error, "timed out");
  CAF_CHECK_EQUAL(steps[1].result, R"({"deploys":[]})");
  CAF_CHECK(steps[1].state == step_state::succeeded);
  // The comparison with the original names the amended steps.
  auto c = jr::compare(journal_of_three(), steps, {"original", "fork", "original run", "fork"});
  CAF_CHECK_EQUAL(c.first_divergence, 1);
  CAF_CHECK(c.steps[0].difference.starts_with("state: original succeeded, fork failed"));
  CAF_CHECK_EQUAL(c.steps[1].difference, "the result differs");
  CAF_CHECK_EQUAL(c.steps[2].difference, "the fork has no step 3");
}

CAF_TEST(the spec says where the fork came from) {
  jr::fork_request req;
  req.run_id = "run_A";
  req.from_step = 3;
  req.policy = "mode: review\n";
  req.edits = {{2, "{}", ""}};
  run r;
  r.spec = jr::fork_spec(req);
  auto o = fork_origin_of(r);
  CAF_REQUIRE(o.has_value());
  CAF_CHECK_EQUAL(o->run_id, "run_A");
  CAF_CHECK_EQUAL(o->step, 3);
  CAF_CHECK_EQUAL(o->policy, "mode: review\n");
  CAF_REQUIRE_EQUAL(o->edited.size(), 1u);
  CAF_CHECK_EQUAL(o->edited[0], 2);
  r.spec = "{}";
  CAF_CHECK(!fork_origin_of(r));
  r.spec = jr::fork_spec(req);
  r.kind = "flow";
  CAF_CHECK(!fork_origin_of(r));
  // It starts as its original did: with the Work's story or the run it follows up.
  auto spec = jr::fork_spec(req, R"({"context":"Work wrk_1","follow_up_of":"run_P",)"
                                 R"("priors":[{"kind":"bad_deploy","target":"checkout"}],)"
                                 R"("versions":{"policy":"cand_1"}})");
  CAF_CHECK(spec.find(R"("context":"Work wrk_1","follow_up_of":"run_P","priors":[{)") !=
            std::string::npos);
  CAF_CHECK(spec.find("versions") == std::string::npos); // the kernel pins those itself
}
