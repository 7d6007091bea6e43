#define CAF_SUITE core_conversation
// core/conversation: the wire shape of a message, the steering forms a run reads, how their
// subjects resolve to the entities a run has seen, the constraints message steps set, and the
// answers to questions about a run, and what a follow-up run starts from.
#include <algorithm>
#include <string>
#include <vector>

#include "core/conversation/answer.hpp"
#include "core/conversation/follow_up.hpp"
#include "core/conversation/message.hpp"
#include "core/conversation/steering.hpp"
#include "tests/support/caf_test.hpp"

using namespace sreh;
namespace cv = sreh::conversation;

namespace {

std::vector<std::string> subjects(std::string_view text) {
  return cv::read(text).subjects;
}

cv::form form_of(std::string_view text) {
  return cv::read(text).what;
}

step message_step(std::int64_t n, std::string text, std::string result) {
  step s;
  s.n = n;
  s.kind = step_kind::message;
  s.state = step_state::succeeded;
  cv::message m;
  m.id = "msg_" + std::to_string(n);
  m.run_id = "run_1";
  m.seq = n;
  m.author = "alice";
  m.text = std::move(text);
  m.at = 1'700'000'000'000'000;
  s.args = cv::to_json(m);
  s.result = std::move(result);
  return s;
}

} // namespace

CAF_TEST(a message reads back as written and bad text is refused by name) {
  cv::message m;
  m.id = "msg_01";
  m.run_id = "run_1";
  m.seq = 3;
  m.author = "alice";
  m.text = "do not touch \"checkout\"\n";
  m.at = 1'700'000'000'123'000;
  auto back = cv::message_from_json(cv::to_json(m));
  CAF_REQUIRE(back.has_value());
  CAF_CHECK_EQUAL(back->id, "msg_01");
  CAF_CHECK_EQUAL(back->seq, 3);
  CAF_CHECK_EQUAL(back->text, m.text);
  CAF_CHECK_EQUAL(back->at, m.at);
  CAF_CHECK_EQUAL(back->taken_step, 0);
  CAF_CHECK(cv::to_json(m).find("\"taken_step\":null") != std::string::npos);
  CAF_CHECK_EQUAL(cv::check_text("  \n").code, errc::invalid_argument);
  auto big = cv::check_text(std::string(cv::max_text_bytes + 1, 'x'));
  CAF_CHECK_EQUAL(big.code, errc::too_large);
  CAF_CHECK(big.message.find("8192") != std::string::npos);
  CAF_CHECK(!cv::check_text("why checkout?"));
  CAF_CHECK(!cv::message_from_json(R"({"id":"m","seq":"one"})").has_value());
}

CAF_TEST(the steering forms are found in any sentence and their subjects are clipped) {
  CAF_CHECK(form_of("do not touch checkout") == cv::form::constraint);
  CAF_CHECK_EQUAL(subjects("Do NOT touch checkout"), std::vector<std::string>{"checkout"});
  CAF_CHECK_EQUAL(subjects("don't touch the database, it is being failed over"),
                  std::vector<std::string>{"database"});
  CAF_CHECK_EQUAL(subjects("the db is being failed over, leave payments-db alone"),
                  std::vector<std::string>{"payments-db"});
  CAF_CHECK_EQUAL(subjects("hands off checkout and payments-db because of the audit"),
                  (std::vector<std::string>{"checkout", "payments-db"}));
  CAF_CHECK(form_of("check cart-cache first") == cv::form::check_first);
  CAF_CHECK_EQUAL(subjects("Please check the cart-cache first."),
                  std::vector<std::string>{"cart-cache"});
  CAF_CHECK_EQUAL(subjects("start with search"), std::vector<std::string>{"search"});
  CAF_CHECK(form_of("stop") == cv::form::stop);
  CAF_CHECK(form_of("Stop the run.") == cv::form::stop);
  CAF_CHECK(form_of("pause please") == cv::form::pause);
  CAF_CHECK(form_of("resume") == cv::form::resume);
  // A command is the first clause; its reason may follow.
  CAF_CHECK(form_of("pause, the db is being failed over") == cv::form::pause);
  CAF_CHECK(form_of("Stop. I will take it from here.") == cv::form::stop);
  CAF_CHECK(form_of("hold on while we check the release") == cv::form::pause);
  CAF_CHECK(form_of("stop guessing and read the logs") == cv::form::note);
  CAF_CHECK(form_of("the errors stop at 10:02. pause") == cv::form::note);
  CAF_CHECK(form_of("why checkout?") == cv::form::question);
  CAF_CHECK(form_of("What else could it have been") == cv::form::question);
  CAF_CHECK(form_of("the release went out at 09:00") == cv::form::note);
  // Not steering: a word that only contains a form, or a stop inside a longer sentence.
  CAF_CHECK(form_of("we stopped the batch jobs at noon") == cv::form::note);
  CAF_CHECK(form_of("whatsoever") == cv::form::note);
  CAF_CHECK(form_of("leave it") == cv::form::note);
}

CAF_TEST(a subject resolves to a name or to every entity of a kind or stays as said) {
  std::vector<cv::known_entity> known{{"checkout", "service"},
                                      {"checkout-db", "database"},
                                      {"payments-db", "database"},
                                      {"cart-cache", "cache"}};
  CAF_CHECK_EQUAL(cv::resolve("Checkout", known), std::vector<std::string>{"checkout"});
  CAF_CHECK_EQUAL(cv::resolve("database", known),
                  (std::vector<std::string>{"checkout-db", "payments-db"}));
  CAF_CHECK_EQUAL(cv::resolve("payments database", known), std::vector<std::string>{"payments-db"});
  CAF_CHECK_EQUAL(cv::resolve("inventory", known), std::vector<std::string>{"inventory"});
}

CAF_TEST(constraints come from message steps that read as constraints) {
  std::vector<step> journal{
    message_step(2, "leave payments-db alone",
                 cv::reading_json({cv::form::constraint, {"payments-db"}}, {"payments-db"})),
    message_step(3, "why?", cv::reading_json({cv::form::question, {}}, {})),
    message_step(
      5, "do not touch the databases",
      cv::reading_json({cv::form::constraint, {"databases"}}, {"checkout-db", "payments-db"})),
  };
  auto all = cv::constraints_of(journal);
  CAF_REQUIRE_EQUAL(all.size(), 2u);
  CAF_CHECK_EQUAL(all[0].entity, "payments-db");
  CAF_CHECK_EQUAL(all[0].step, 2);
  CAF_CHECK_EQUAL(all[0].author, "alice");
  CAF_CHECK_EQUAL(all[1].entity, "checkout-db");
  CAF_CHECK_EQUAL(all[1].step, 5);
  CAF_REQUIRE(cv::constraint_on(all, "PAYMENTS-DB") != nullptr);
  CAF_CHECK_EQUAL(cv::constraint_on(all, "payments-db")->step, 2);
  CAF_CHECK(cv::constraint_on(all, "payments") == nullptr);
  CAF_CHECK(cv::constraint_on(all, "") == nullptr);
  CAF_CHECK_EQUAL(cv::describe(all[0]),
                  "constraint from alice at step 2: \"leave payments-db alone\"");
  CAF_CHECK(cv::constraints_json(all).find(R"("entity":"checkout-db")") != std::string::npos);
}

CAF_TEST(a pause holds until the next resume and a working run says so) {
  auto pause = [](std::int64_t n, std::string text) {
    return message_step(n, std::move(text), cv::reading_json({cv::form::pause, {}}, {}));
  };
  auto resume = [](std::int64_t n) {
    return message_step(n, "resume", cv::reading_json({cv::form::resume, {}}, {}));
  };
  auto note = message_step(4, "fyi", cv::reading_json({cv::form::note, {}}, {}));
  CAF_CHECK_EQUAL(form_of("Please pause."), cv::form::pause);
  CAF_CHECK_EQUAL(form_of("go on"), cv::form::resume);
  CAF_CHECK(!cv::pause_of({}).has_value());
  CAF_CHECK_EQUAL(cv::pause_json(std::nullopt), "null");
  // The last pause or resume decides; a note after a pause does not lift it.
  std::vector<step> journal{pause(2, "hold on, db failover"), note};
  auto p = cv::pause_of(journal);
  CAF_REQUIRE(p.has_value());
  CAF_CHECK_EQUAL(p->step, 2);
  CAF_CHECK_EQUAL(p->author, "alice");
  CAF_CHECK_EQUAL(p->said, "hold on, db failover");
  CAF_CHECK_EQUAL(cv::pause_json(p), R"({"author":"alice","said":"hold on, db failover",)"
                                     R"("message":"msg_2","step":2})");
  journal.push_back(resume(5));
  CAF_CHECK(!cv::pause_of(journal).has_value());
  journal.push_back(pause(6, "pause"));
  auto again = cv::pause_of(journal);
  CAF_REQUIRE(again.has_value());
  CAF_CHECK_EQUAL(again->step, 6);
  // A paused working run answers "what are you doing?" with the pause, citing its step.
  postmortem::document d;
  d.outcome = "running";
  auto a = cv::answer_from("what are you doing?", d, journal);
  CAF_CHECK(a.text.find("The run is paused: alice said \"pause\" at step 6") != std::string::npos);
  CAF_CHECK(std::find(a.cited.begin(), a.cited.end(), 6) != a.cited.end());
}

namespace {

std::vector<step> tool_steps(std::int64_t n) {
  std::vector<step> out;
  for (std::int64_t i = 1; i <= n; ++i) {
    step s;
    s.n = i;
    s.kind = step_kind::tool;
    s.state = step_state::succeeded;
    out.push_back(s);
  }
  return out;
}

/// A run that found a bad deploy on checkout (steps 3 and 5), ruled out the cache (step 4) and
/// rolled back at step 6, approved by bob.
postmortem::document found_deploy() {
  postmortem::document d;
  d.outcome = "succeeded";
  d.summary = "bad_deploy on checkout, rolled back";
  d.affected = {"frontend", "checkout", "payments"};
  d.service = "frontend";
  d.causes.push_back({"bad_deploy",
                      "checkout",
                      0.9,
                      {3, 5},
                      {"step 3: checkout 5xx rose at 10:02", "step 5: v2.4.1 deployed at 10:01"},
                      ""});
  d.did_not_work = {"ruled out cache_eviction on cart-cache: step 4: hit ratio 0.97",
                    "denied: step 7 service.restart {\"service\":\"frontend\"} (by carol)"};
  postmortem::action a;
  a.step = 6;
  a.tool = "deploy.rollback";
  a.args = R"({"service":"checkout"})";
  a.state = "succeeded";
  a.verified = true;
  a.check = "step 8: error rate 0.1 %";
  a.approved_by = "bob";
  d.actions.push_back(a);
  d.timeline.push_back({1, 8, "verify error rate", ""});
  return d;
}

} // namespace

CAF_TEST(a question is about the cause or the alternatives or the actions or what is left) {
  CAF_CHECK(cv::topic_of("why checkout?") == cv::topic::why);
  CAF_CHECK(cv::topic_of("Why do you think it is the deploy?") == cv::topic::why);
  CAF_CHECK(cv::topic_of("what else could it have been?") == cv::topic::alternatives);
  CAF_CHECK(cv::topic_of("why not the database?") == cv::topic::alternatives);
  CAF_CHECK(cv::topic_of("who approved the rollback?") == cv::topic::actions);
  CAF_CHECK(cv::topic_of("what is left unexplained?") == cv::topic::unexplained);
  CAF_CHECK(cv::topic_of("how is it going?") == cv::topic::status);
}

CAF_TEST(an answer cites the steps its facts come from and only steps that exist) {
  const auto d = found_deploy();
  const auto steps = tool_steps(8);
  auto why = cv::answer_from("why checkout?", d, steps);
  CAF_CHECK(why.about == cv::topic::why);
  CAF_CHECK(why.text.find("bad_deploy on checkout") != std::string::npos);
  CAF_CHECK_EQUAL(why.cited, (std::vector<std::int64_t>{3, 5}));
  auto why_fe = cv::answer_from("why frontend?", d, steps);
  CAF_CHECK(why_fe.text.starts_with("I did not conclude a cause on frontend."));
  auto alt = cv::answer_from("what else could it have been?", d, steps);
  CAF_CHECK(alt.text.find("cart-cache") != std::string::npos);
  CAF_CHECK_EQUAL(alt.cited, (std::vector<std::int64_t>{4}));
  auto acts = cv::answer_from("who approved it?", d, steps);
  CAF_CHECK(acts.text.find("approved by bob") != std::string::npos);
  CAF_CHECK(acts.text.find("denied: step 7") != std::string::npos);
  CAF_CHECK_EQUAL(acts.cited, (std::vector<std::int64_t>{6, 8, 7}));
  auto left = cv::answer_from("what is left unexplained?", d, steps);
  CAF_CHECK(left.text.find("payments is affected") != std::string::npos);
  CAF_CHECK(left.text.find("frontend") == std::string::npos); // the causes explain its symptoms
  // A journal of 4 steps: the document's later steps are not cited.
  auto short_why = cv::answer_from("why?", d, tool_steps(4));
  CAF_CHECK_EQUAL(short_why.cited, (std::vector<std::int64_t>{3}));
  postmortem::document live;
  live.outcome = "running";
  live.timeline.push_back({1, 2, "topology.get", ""});
  auto status = cv::answer_from("why?", live, tool_steps(2));
  CAF_CHECK(status.text.starts_with("No cause is concluded yet."));
  CAF_CHECK(status.text.find("still working") != std::string::npos);
  CAF_CHECK_EQUAL(status.cited, (std::vector<std::int64_t>{2}));
}

CAF_TEST(a reply step records the question it answers and the steps it cites) {
  CAF_CHECK_EQUAL(cv::cited_in("steps 3, 4 and 12; step 2; steplike 9; substep 7"),
                  (std::vector<std::int64_t>{3, 4, 12, 2}));
  CAF_CHECK_EQUAL(cv::reply_json(4, "on the evidence of steps 3, 5", 9),
                  R"({"in_reply_to":4,"cites":[3,5]})");
  // A step the journal does not have is not cited.
  CAF_CHECK_EQUAL(cv::reply_json(4, "see steps 3 and 40", 9), R"({"in_reply_to":4,"cites":[3]})");
}

CAF_TEST(
  a question to a model says who asks and how to answer and its answer keeps to the journal) {
  cv::message q;
  q.author = "alice";
  q.text = "why checkout?";
  q.at = 1'700'000'000'000'000;
  auto turn = cv::model_question(q);
  CAF_CHECK(turn.starts_with("alice asks about this run at 2023-11-14T22:13:20"));
  CAF_CHECK(turn.find(": why checkout?") != std::string::npos);
  CAF_CHECK(turn.find("do not call a tool") != std::string::npos);
  CAF_CHECK(turn.find("\"step N\"") != std::string::npos);
  CAF_CHECK_EQUAL(cv::checked_model_answer("the deploy (steps 2, 3)", 5),
                  std::string{"the deploy (steps 2, 3)"});
  CAF_CHECK_EQUAL(cv::checked_model_answer("the deploy (step 2, step 9 and step 12)", 5),
                  std::string{"the deploy (step 2, step 9 and step 12)\n\n(Not in the journal, "
                              "which has 5 steps: step 9, step 12.)"});
}

CAF_TEST(a follow up starts from the parents conclusion and evidence within its bound) {
  run parent;
  parent.id = "run_01J00000000000000000000000";
  parent.goal = "checkout is failing";
  parent.state = run_state::succeeded;
  postmortem::document d;
  d.summary = "bad_deploy on checkout: rolled back, recovered";
  postmortem::cause c;
  c.kind = "bad_deploy";
  c.target = "checkout";
  c.confidence = 0.93;
  c.evidence = {"step 4: checkout deployed v2.4.1 10 min ago", "step 5: checkout 5xx after it"};
  d.causes.push_back(c);
  d.causes.push_back({}); // a cause the conclusion names without a kind is no prior
  postmortem::action a;
  a.step = 9;
  a.tool = "deploy.rollback";
  a.args = R"({"service":"checkout"})";
  a.state = "succeeded";
  a.verified = true;
  a.approved_by = "alice";
  d.actions.push_back(a);
  auto text = cv::follow_up_context(parent, d);
  CAF_MESSAGE(text);
  for (const auto* part :
       {"Follow-up of run run_01J00000000000000000000000 (succeeded), which was "
        "asked: checkout is failing",
        "It concluded: bad_deploy on checkout", "- bad_deploy on checkout (confidence 0.93)",
        "  - step 4: checkout deployed v2.4.1", "  - step 5: checkout 5xx",
        "- step 9: deploy.rollback {\"service\":\"checkout\"} (succeeded, verified, "
        "approved by alice)"})
    CAF_CHECK(text.find(part) != std::string::npos);
  auto spec = cv::follow_up_spec(parent, d);
  auto f = cv::follow_up_of(spec);
  CAF_REQUIRE(f.has_value());
  CAF_CHECK_EQUAL(f->of, parent.id);
  CAF_REQUIRE_EQUAL(f->priors.size(), 1u);
  CAF_CHECK_EQUAL(f->priors[0].kind, "bad_deploy");
  CAF_CHECK_EQUAL(f->priors[0].target, "checkout");
  CAF_CHECK(!cv::follow_up_of(R"({"context":"a Work's story"})").has_value());
  CAF_CHECK(!cv::follow_up_of(R"({"follow_up_of":3})").has_value());
  // Too long: the evidence goes first, what was concluded and done stays.
  for (int i = 0; i < 200; ++i)
    d.causes[0].evidence.push_back("step 6: a long fact number " + std::to_string(i));
  auto bounded = cv::follow_up_context(parent, d, 2048);
  CAF_CHECK_LESS_OR_EQUAL(bounded.size(), 2048u);
  CAF_CHECK(bounded.find("more evidence left out") != std::string::npos);
  CAF_CHECK(bounded.find("deploy.rollback") != std::string::npos);
  CAF_CHECK(bounded.find("fact number 199") == std::string::npos);
}
