#define CAF_SUITE llm_context
#include <caf/test/unit_test.hpp>

#include <string>

#include "core/llm/context.hpp"

using namespace sreh;
using namespace sreh::llm;

namespace {

prior_step call_step(std::int64_t n, std::string result, bool conclusion = false) {
  prior_step s;
  s.journal_step = n;
  s.thought = "checking " + std::to_string(n);
  s.has_call = true;
  s.call = {"call_" + std::to_string(n), "logs.search", R"({"q":"x"})"};
  s.result = std::move(result);
  s.conclusion_bearing = conclusion;
  return s;
}

context_input base_input() {
  context_input in;
  in.system_prompt = "You are sreh's reasoner (prompt v1).";
  in.goal = "checkout p99 is high";
  in.labels = {{"alertname", "HighLatency"}, {"service", "checkout"}};
  in.snapshot = "deploy checkout v42 at 10:01";
  in.tools = {{"logs.search", "Search logs", R"({"type":"object"})"}};
  in.model = "m";
  in.max_tokens = 300;
  return in;
}

/// The tool results of a request, in order.
/// The tool results sent, without the journal step each starts with.
std::vector<std::string> results(const chat_request& r) {
  std::vector<std::string> out;
  for (auto& m : r.messages)
    if (m.role == role::tool) {
      const auto& c = m.result.content;
      auto end = c.starts_with("[journal step ") ? c.find("] ") : std::string::npos;
      out.push_back(end == std::string::npos ? c : c.substr(end + 2));
    }
  return out;
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

/// A journal of a tool step, a failed one, an approval, a conclusion and a step at its intent.
std::vector<step> sample_journal() {
  std::vector<step> journal(5);
  journal[0].n = 1;
  journal[0].kind = step_kind::tool;
  journal[0].state = step_state::succeeded;
  journal[0].tool = "logs.search";
  journal[0].args = R"({"q":"oom"})";
  journal[0].decision = R"({"thought":"look for OOMs","detail":{},"policy":{}})";
  journal[0].result = R"({"hits":3})";
  journal[1].n = 2;
  journal[1].kind = step_kind::tool;
  journal[1].state = step_state::failed;
  journal[1].tool = "deploy.history";
  journal[1].decision = R"({"thought":"","tool_call_id":"toolu_9"})";
  journal[1].error = "unknown service";
  journal[2].n = 3;
  journal[2].kind = step_kind::approval; // not the model's to see
  journal[2].state = step_state::succeeded;
  journal[3].n = 4;
  journal[3].kind = step_kind::conclude;
  journal[3].state = step_state::succeeded;
  journal[3].result = R"({"conclusion":"the v42 deploy leaks memory"})";
  journal[4].n = 5;
  journal[4].kind = step_kind::tool; // still at its intent
  return journal;
}

} // namespace

CAF_TEST(everything fits and is sent in full) {
  auto in = base_input();
  in.steps.push_back(call_step(1, R"({"lines":3})"));
  prior_step note;
  note.journal_step = 2;
  note.result = "deploy v42 correlates with the latency";
  note.conclusion_bearing = true;
  in.steps.push_back(note);
  in.steps.push_back(call_step(3, R"({"lines":0})"));
  in.steps.back().is_error = true;
  auto out = assemble_context(in, {});
  auto& r = out.request;
  CAF_CHECK_EQUAL(r.system, in.system_prompt);
  CAF_CHECK_EQUAL(r.model, "m");
  CAF_CHECK_EQUAL(r.max_tokens, 300);
  CAF_REQUIRE_EQUAL(r.messages.size(), 6u); // opening, call+result, note, call+result
  CAF_CHECK_EQUAL(r.messages[0].text, "Goal: checkout p99 is high\n\nAlert labels:\n"
                                      "- alertname=HighLatency\n- service=checkout\n\n"
                                      "Current state:\ndeploy checkout v42 at 10:01");
  CAF_CHECK(r.messages[1].role == role::assistant);
  CAF_CHECK_EQUAL(r.messages[1].text, "checking 1");
  CAF_REQUIRE_EQUAL(r.messages[1].tool_calls.size(), 1u);
  CAF_CHECK_EQUAL(r.messages[2].result.tool_call_id, "call_1");
  // Each result starts with its journal step: the model cites its evidence by step number.
  CAF_CHECK_EQUAL(r.messages[2].result.content, R"([journal step 1] {"lines":3})");
  CAF_CHECK_EQUAL(r.messages[3].text, "[journal step 2] deploy v42 correlates with the latency");
  CAF_CHECK(r.messages[5].result.is_error);
  CAF_CHECK_EQUAL(r.tools.size(), 1u);
  CAF_CHECK_EQUAL(out.report.summarized + out.report.truncated + out.report.omitted, 0u);
  CAF_CHECK_EQUAL(out.report.bytes_removed, 0u);
  CAF_CHECK(!out.report.over_budget);
  CAF_CHECK_EQUAL(out.report.estimated_tokens, estimate_tokens(r));
}

CAF_TEST(a long result is truncated with a pointer to the journal) {
  auto in = base_input();
  in.steps.push_back(call_step(7, std::string(5000, 'x') + "é"));
  context_budget b;
  b.max_result_bytes = 1000;
  auto out = assemble_context(in, b);
  auto got = results(out.request);
  CAF_REQUIRE_EQUAL(got.size(), 1u);
  CAF_CHECK(got[0].size() <= 1000u); // the result; its step number comes before it
  CAF_CHECK(contains(got[0], "[truncated: 5002 bytes; full result in journal step 7]"));
  CAF_CHECK_EQUAL(out.report.truncated, 1u);
  CAF_CHECK_EQUAL(out.report.bytes_removed, 5002u - got[0].find("\n[truncated"));
}

CAF_TEST(older results become summaries and the last K and conclusions stay whole) {
  auto in = base_input();
  std::string big(2000, 'r');
  for (int i = 1; i <= 8; ++i)
    in.steps.push_back(call_step(i, "line one\nof step " + std::to_string(i) + " " + big, i == 2));
  context_budget b;
  b.keep_last = 3;
  b.max_input_tokens = 2500; // the whole is ~4,300
  b.summary_bytes = 20;
  auto out = assemble_context(in, b);
  auto got = results(out.request);
  CAF_REQUIRE_EQUAL(got.size(), 8u);
  CAF_CHECK(contains(got[0], "[summarized: line one of step 1 r"));
  CAF_CHECK(contains(got[0], "(2019 bytes); full result in journal step 1]"));
  CAF_CHECK_EQUAL(got[1], in.steps[1].result); // conclusion-bearing
  for (std::size_t i = 5; i < 8; ++i)
    CAF_CHECK_EQUAL(got[i], in.steps[i].result); // the last 3
  CAF_CHECK(out.report.summarized >= 1u);
  CAF_CHECK(out.report.estimated_tokens <= 2500);
  CAF_CHECK(!out.report.over_budget);
  // Summarized oldest first, and only as far as needed: the last summarized one is followed by
  // whole ones only.
  std::size_t summarized = 0;
  for (std::size_t i = 0; i < 5; ++i)
    summarized += contains(got[i], "[summarized:") ? 1 : 0;
  CAF_CHECK_EQUAL(summarized, out.report.summarized);
  // Every call still has its result right after it.
  auto& m = out.request.messages;
  for (std::size_t i = 0; i < m.size(); ++i)
    if (!m[i].tool_calls.empty()) {
      CAF_REQUIRE(i + 1 < m.size());
      CAF_CHECK(m[i + 1].role == role::tool);
      CAF_CHECK_EQUAL(m[i + 1].result.tool_call_id, m[i].tool_calls[0].id);
    }
}

CAF_TEST(when summaries are not enough the oldest steps are left out whole) {
  auto in = base_input();
  for (int i = 1; i <= 30; ++i)
    in.steps.push_back(call_step(i, std::string(400, 'a')));
  context_budget b;
  b.keep_last = 2;
  b.max_input_tokens = 600;
  auto out = assemble_context(in, b);
  auto& rep = out.report;
  CAF_CHECK(rep.omitted > 0u);
  CAF_CHECK(!rep.over_budget);
  CAF_CHECK(rep.estimated_tokens <= 600);
  CAF_CHECK(contains(out.request.messages[0].text, "earlier steps are left out to fit the "
                                                   "context: journal steps 1, 2"));
  // Calls and results stay paired: as many of each.
  std::size_t calls = 0, res = 0;
  for (auto& m : out.request.messages) {
    calls += m.tool_calls.size();
    res += m.role == role::tool ? 1 : 0;
  }
  CAF_CHECK_EQUAL(calls, res);
  CAF_CHECK_EQUAL(calls, 30u - rep.omitted);
  auto got = results(out.request);
  CAF_CHECK_EQUAL(got.back(), std::string(400, 'a'));
  CAF_CHECK(rep.bytes_removed > rep.omitted * 400u);
}

CAF_TEST(what is always kept may not fit and the report says so) {
  auto in = base_input();
  in.goal = std::string(4000, 'g');
  in.steps.push_back(call_step(1, "small"));
  context_budget b;
  b.max_input_tokens = 100;
  auto out = assemble_context(in, b);
  CAF_CHECK(out.report.over_budget);
  CAF_CHECK_EQUAL(out.report.budget_tokens, 100);
  CAF_CHECK(contains(out.request.messages[0].text, in.goal)); // the goal is never cut
  CAF_CHECK_EQUAL(results(out.request).size(), 1u);           // the last K stay
}

CAF_TEST(a call without id gets one from its journal step) {
  auto in = base_input();
  in.steps.push_back(call_step(4, "r"));
  in.steps.back().call.id.clear();
  auto out = assemble_context(in, {});
  CAF_CHECK_EQUAL(out.request.messages[1].tool_calls[0].id, "call_4");
  CAF_CHECK_EQUAL(out.request.messages[2].result.tool_call_id, "call_4");
}

CAF_TEST(token estimate) {
  CAF_CHECK_EQUAL(estimate_tokens(""), 0);
  CAF_CHECK_EQUAL(estimate_tokens("abc"), 1);
  CAF_CHECK_EQUAL(estimate_tokens("abcd"), 1);
  CAF_CHECK_EQUAL(estimate_tokens("abcde"), 2);
  chat_request r;
  r.system = "abcd";
  r.messages.push_back(message::user("abcdabcd"));
  CAF_CHECK_EQUAL(estimate_tokens(r), 1 + 4 + 2 + 4);
}

CAF_TEST(prior steps from a journal) {
  auto journal = sample_journal();
  auto got = prior_steps_of(journal);
  CAF_REQUIRE_EQUAL(got.size(), 3u);
  CAF_CHECK(got[0].has_call);
  CAF_CHECK_EQUAL(got[0].call.id, "call_1");
  CAF_CHECK_EQUAL(got[0].call.name, "logs.search");
  CAF_CHECK_EQUAL(got[0].call.arguments, R"({"q":"oom"})");
  CAF_CHECK_EQUAL(got[0].thought, "look for OOMs");
  CAF_CHECK_EQUAL(got[0].result, R"({"hits":3})");
  CAF_CHECK(!got[0].is_error);
  CAF_CHECK_EQUAL(got[1].call.id, "toolu_9");
  CAF_CHECK(got[1].is_error);
  CAF_CHECK_EQUAL(got[1].result, "failed: unknown service");
  CAF_CHECK(!got[2].has_call);
  CAF_CHECK(got[2].conclusion_bearing);
  CAF_CHECK_EQUAL(got[2].journal_step, 4);
  CAF_CHECK_EQUAL(got[2].result, "conclusion: the v42 deploy leaks memory");
}

CAF_TEST(recalled memories go with the goal and the recall step is not a call) {
  auto in = base_input();
  obs::past_case m;
  m.id = "mem_42";
  m.version = 3;
  m.kind = "postmortem";
  m.score = 0.8;
  m.labels = {{"fault", "bad_deploy"}, {"service", "payments"}};
  m.text = "payments 5xx after release v1.9; rolled back";
  m.truncated = true;
  in.memories.push_back(m);
  in.steps.push_back(call_step(2, R"({"lines":3})"));
  auto out = assemble_context(in, context_budget{});
  const auto& opening = out.request.messages.front().text;
  CAF_CHECK(contains(opening, "long-term memory"));
  CAF_CHECK(contains(opening, "- mem_42 v3 (postmortem, fault=bad_deploy, service=payments): "
                              "payments 5xx after release v1.9; rolled back [...]"));
  // The memories are part of what is always sent: they are in the estimate.
  auto without = base_input();
  without.steps = in.steps;
  CAF_CHECK_GREATER(out.report.estimated_tokens,
                    assemble_context(without, context_budget{}).report.estimated_tokens);
  // The journal's recall step is not shown as a call the model made.
  std::vector<step> journal(2);
  journal[0].n = 1;
  journal[0].kind = step_kind::tool;
  journal[0].state = step_state::succeeded;
  journal[0].tool = "memory.search";
  journal[0].decision = R"({"thought":"recall: 1 memory","recall":true})";
  journal[0].result = R"({"memories":[]})";
  journal[1] = journal[0];
  journal[1].n = 2;
  journal[1].decision = R"({"thought":"the model asks memory","detail":{}})";
  auto got = prior_steps_of(journal);
  CAF_REQUIRE_EQUAL(got.size(), 1u);
  CAF_CHECK_EQUAL(got[0].journal_step, 2);
  CAF_CHECK(is_recall(journal[0]));
  CAF_CHECK(!is_recall(journal[1]));
}

CAF_TEST(a persons message is a user turn and the report lists the messages sent) {
  std::vector<step> journal(3);
  journal[0].n = 1;
  journal[0].kind = step_kind::tool;
  journal[0].state = step_state::succeeded;
  journal[0].tool = "logs.search";
  journal[0].result = R"({"hits":3})";
  journal[1].n = 2;
  journal[1].kind = step_kind::message;
  journal[1].state = step_state::succeeded;
  journal[1].args = R"({"id":"msg_1","run":"run_1","seq":1,"author":"alice","kind":"message",)"
                    R"("text":"check cart-cache first","at":"2026-12-07T10:00:00Z"})";
  journal[1].result = R"({"form":"check_first","subjects":["cart-cache"],"entities":[]})";
  journal[2].n = 3;
  journal[2].kind = step_kind::reply; // the kernel's answer: not the model's words
  journal[2].state = step_state::succeeded;
  journal[2].args = R"({"seq":2,"author":"agent","text":"because of step 1"})";
  auto got = prior_steps_of(journal);
  CAF_REQUIRE_EQUAL(got.size(), 2u);
  CAF_CHECK(!got[1].has_call);
  CAF_CHECK_EQUAL(got[1].message_seq, 1);
  CAF_CHECK_EQUAL(got[1].result,
                  "alice said to this run at 2026-12-07T10:00:00Z: check cart-cache first");
  auto in = base_input();
  in.steps = got;
  auto out = assemble_context(in, context_budget{});
  const auto& last = out.request.messages.back();
  CAF_CHECK(last.role == role::user);
  CAF_CHECK_EQUAL(last.text,
                  "[journal step 2] alice said to this run at 2026-12-07T10:00:00Z: check "
                  "cart-cache first");
  CAF_CHECK_EQUAL(out.report.messages_seen, std::vector<std::int64_t>{1});
  // A message left out to fit the budget is not among those seen.
  context_budget tight;
  tight.keep_last = 0;
  tight.max_input_tokens = 1;
  in.steps.push_back(call_step(4, R"({"lines":1})"));
  auto trimmed = assemble_context(in, tight);
  CAF_CHECK(trimmed.report.omitted > 0);
  CAF_CHECK(trimmed.report.messages_seen.empty());
}

CAF_TEST(the kept prior steps are those of the journal as it grows and its steps finish) {
  auto journal = sample_journal();
  prior_steps_cache cache;
  auto upper = [](prior_step& p) {
    if (p.has_call)
      p.call.name = "wire_" + p.call.name;
  };
  auto expect_same = [&] {
    auto want = prior_steps_of(journal);
    for (auto& p : want)
      upper(p);
    const auto& got = cache.of(journal, upper);
    CAF_REQUIRE_EQUAL(got.size(), want.size());
    for (std::size_t i = 0; i < want.size(); ++i) {
      CAF_CHECK_EQUAL(got[i].journal_step, want[i].journal_step);
      CAF_CHECK_EQUAL(got[i].call.name, want[i].call.name);
      CAF_CHECK_EQUAL(got[i].call.id, want[i].call.id);
      CAF_CHECK_EQUAL(got[i].result, want[i].result);
      CAF_CHECK_EQUAL(got[i].thought, want[i].thought);
      CAF_CHECK_EQUAL(got[i].is_error, want[i].is_error);
    }
  };
  expect_same();
  CAF_CHECK_EQUAL(cache.of(journal, upper).size(), 3u);
  // The step at its intent finishes: it is shown from now on, once.
  journal[4].state = step_state::succeeded;
  journal[4].tool = "metrics.query";
  journal[4].result = R"({"p99_ms":900})";
  expect_same();
  CAF_CHECK_EQUAL(cache.of(journal, upper).size(), 4u);
  // More steps; then the journal read again from the store, shorter (a recovered run).
  step more;
  more.n = 6;
  more.kind = step_kind::tool;
  more.state = step_state::in_doubt;
  more.tool = "service.restart";
  journal.push_back(more);
  expect_same();
  journal.resize(2);
  expect_same();
  CAF_CHECK_EQUAL(cache.of(journal, upper).size(), 2u);
}

CAF_TEST(each steps cost is counted exactly as the request is estimated) {
  // Steps whose texts end at every size modulo 4: a budget of exactly the estimate keeps every
  // result whole, one token less summarizes one.
  auto in = base_input();
  for (std::int64_t n = 1; n <= 8; ++n) {
    auto s = call_step(n, std::string(static_cast<std::size_t>(300 + n), 'r'));
    s.thought.append(static_cast<std::size_t>(n % 4), 't');
    if (n % 3 == 0)
      s.call.id.clear();
    in.steps.push_back(s);
  }
  prior_step note;
  note.journal_step = 9;
  note.thought = "so far";
  note.result = "the deploy correlates";
  in.steps.push_back(note);
  context_budget roomy;
  roomy.max_input_tokens = 1'000'000;
  const auto whole = assemble_context(in, roomy).report.estimated_tokens;
  context_budget exact = roomy;
  exact.keep_last = 0;
  exact.max_input_tokens = whole;
  auto fits = assemble_context(in, exact);
  CAF_CHECK_EQUAL(fits.report.summarized, 0u);
  CAF_CHECK_EQUAL(fits.report.estimated_tokens, whole);
  exact.max_input_tokens = whole - 1;
  auto over = assemble_context(in, exact);
  CAF_CHECK_EQUAL(over.report.summarized, 1u);
  CAF_CHECK_LESS(over.report.estimated_tokens, whole);
}
