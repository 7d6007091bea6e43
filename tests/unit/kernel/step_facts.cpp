#define CAF_SUITE step_facts
#include "actors/kernel/run/step_facts.hpp"

#include <string>

#include "core/model/run.hpp"
#include "tests/support/caf_test.hpp"

using namespace sreh;
using namespace sreh::actors;

namespace {

step make(step_kind kind, step_state state, std::string args, std::string decision,
          std::string result = {}) {
  step s;
  s.run_id = "run_1";
  s.n = 3;
  s.kind = kind;
  s.state = state;
  s.args = std::move(args);
  s.decision = std::move(decision);
  s.result = std::move(result);
  return s;
}

} // namespace

CAF_TEST(a tool step made from a model call names its reason step and call) {
  auto f = read_facts(make(step_kind::tool, step_state::intent, R"({"replicas":3})",
                           R"({"thought":"scale","detail":{"reason_step":2,"tool_call_id":"c1"},)"
                           R"("policy":{"effect":"allow"}})"));
  CAF_CHECK_EQUAL(f.thought, "scale");
  CAF_CHECK_EQUAL(f.reason_step, 2);
  CAF_CHECK_EQUAL(f.tool_call_id, "c1");
  CAF_CHECK(!f.rejected);
  CAF_CHECK_EQUAL(f.compensates, 0);
  CAF_CHECK(!f.flow);
  CAF_CHECK(!f.runs);
  CAF_CHECK_EQUAL(f.until, 0); // a tool's own arguments are not read as the kernel's
}

CAF_TEST(a call refused before policy and a compensation read as such) {
  auto rejected = read_facts(make(step_kind::tool, step_state::failed, "{}",
                                  R"({"thought":"","detail":{},"policy":{"effect":"rejected"}})"));
  CAF_CHECK(rejected.rejected);
  auto undo =
    read_facts(make(step_kind::tool, step_state::intent, "{}", R"({"detail":{"compensates":7}})"));
  CAF_CHECK_EQUAL(undo.compensates, 7);
}

CAF_TEST(a timer step says when it fires and what it checks) {
  auto f =
    read_facts(make(step_kind::timer, step_state::intent,
                    R"({"until_us":1700000000000000,"for_step":2,"check":"pods ready"})", "{}"));
  CAF_CHECK_EQUAL(f.until, 1700000000000000);
  CAF_CHECK_EQUAL(f.for_step, 2);
  CAF_CHECK_EQUAL(f.check, "pods ready");
}

CAF_TEST(a flow step carries its flow step phase attempt and timeout) {
  auto f = read_facts(
    make(step_kind::tool, step_state::succeeded, "{}",
         R"({"thought":"t","detail":{"flow":{"step":"restart","phase":"compensate","attempt":2,)"
         R"("timeout_ms":5000}}})"));
  CAF_REQUIRE(f.flow);
  CAF_CHECK_EQUAL(f.flow->step, "restart");
  CAF_CHECK(f.flow->phase == flows::phase::compensate);
  CAF_CHECK_EQUAL(f.flow->attempt, 2);
  CAF_CHECK_EQUAL(f.timeout_ms(), 5000);
  auto plain = read_facts(make(step_kind::tool, step_state::succeeded, "{}", "{}"));
  CAF_CHECK_EQUAL(plain.timeout_ms(), 0);
}

CAF_TEST(a subruns step says how its runs join and their keys in order) {
  auto f = read_facts(make(step_kind::subruns, step_state::intent,
                           R"({"join":"any","single_goal":true,"timeout_ms":60000,)"
                           R"("runs":[{"key":"b0"},{"key":""},{"key":7},"x",{"key":"b1"}]})",
                           "{}"));
  CAF_REQUIRE(f.runs);
  CAF_CHECK(f.runs->join == flows::join_mode::any);
  CAF_CHECK(f.runs->single_goal);
  CAF_CHECK_EQUAL(f.runs->timeout_ms, 60000);
  CAF_REQUIRE_EQUAL(f.runs->keys.size(), 3u); // a key that is not a string is no key
  CAF_CHECK_EQUAL(f.runs->keys[0], "b0");
  CAF_CHECK_EQUAL(f.runs->keys[1], "");
  CAF_CHECK_EQUAL(f.runs->keys[2], "b1");
  auto all = read_facts(make(step_kind::subruns, step_state::intent, R"({"timeout_ms":-5})", "{}"));
  CAF_REQUIRE(all.runs);
  CAF_CHECK(all.runs->join == flows::join_mode::all);
  CAF_CHECK_EQUAL(all.runs->timeout_ms, 0);
}

CAF_TEST(a reason step has its request hash and once answered its answer) {
  auto intent = read_facts(
    make(step_kind::reason, step_state::intent, R"({"route":"r","request_hash":"abc"})", "{}"));
  CAF_CHECK_EQUAL(intent.request_hash, "abc");
  CAF_CHECK(!intent.answer);
  auto answered = read_facts(make(
    step_kind::reason, step_state::succeeded, R"({"request_hash":"abc"})", "{}",
    R"({"text":"checking","bad":null,"tool_calls":[{"id":"c1","name":"logs","arguments":"{}"},)"
    R"(3,{"id":"c2","name":"metrics"}]})"));
  CAF_REQUIRE(answered.answer);
  CAF_CHECK_EQUAL(answered.answer->text, "checking");
  CAF_CHECK_EQUAL(answered.answer->bad, "");
  CAF_REQUIRE_EQUAL(answered.answer->calls.size(), 2u);
  CAF_CHECK_EQUAL(answered.answer->calls[1].id, "c2");
  CAF_CHECK_EQUAL(answered.answer->calls[1].arguments, "");
  auto failed = read_facts(make(step_kind::reason, step_state::failed, "{}", "{}", "{}"));
  CAF_CHECK(!failed.answer); // no model answered
}

CAF_TEST(malformed payloads read as defaults) {
  for (const auto* text : {"", "{", "[1,2]", "null", "\"x\"", R"({"detail":"flow"})"}) {
    auto f = read_facts(make(step_kind::timer, step_state::succeeded, text, text, text));
    CAF_CHECK_EQUAL(f.until, 0);
    CAF_CHECK_EQUAL(f.thought, "");
    CAF_CHECK(!f.flow);
  }
  auto bad_answer = read_facts(make(step_kind::reason, step_state::succeeded, "{}", "{}", "[]"));
  CAF_CHECK(!bad_answer.answer);
}

CAF_TEST(a checkpoint keeps its run seq and cost) {
  CAF_CHECK_EQUAL(checkpoint_of(12, 0), R"({"run_seq":12})");
  auto priced = checkpoint_of(13, 0.25);
  CAF_CHECK_EQUAL(run_seq_of_checkpoint(priced), 13);
  CAF_CHECK_EQUAL(cost_of_checkpoint(priced), 0.25);
  CAF_CHECK_EQUAL(run_seq_of_checkpoint("{}"), 0);
  CAF_CHECK_EQUAL(run_seq_of_checkpoint("not json"), 0);
}

CAF_TEST(a plain tool decision has no facts and a flow one keeps its thought) {
  auto plain =
    read_facts(make(step_kind::tool, step_state::intent, R"({"replicas":3})",
                    R"({"thought":"scale it","detail":{},"policy":{"effect":"allow"}})"));
  CAF_CHECK_EQUAL(plain.reason_step, 0);
  CAF_CHECK_EQUAL(plain.compensates, 0);
  CAF_CHECK(!plain.rejected);
  CAF_CHECK(!plain.flow);
  auto flow =
    read_facts(make(step_kind::tool, step_state::intent, "{}",
                    R"({"thought":"step restart","detail":{"flow":{"step":"restart"}}})"));
  CAF_REQUIRE(flow.flow.has_value());
  CAF_CHECK_EQUAL(flow.thought, "step restart");
}
