// A Work's conversation (core/works/conversation.hpp): what was said on its timeline, what its
// active run hears, and the bounded context a new run starts with.
#define CAF_SUITE work_conversation
#include <caf/test/unit_test.hpp>

#include <string>

#include "core/works/conversation.hpp"

using namespace sreh;
using namespace sreh::works;

namespace {

constexpr timestamp_us t0 = 1'765'000'000'000'000;

event entry(std::int64_t seq, std::string kind, std::string data) {
  event e;
  e.run_id = "wrk_1";
  e.run_seq = seq;
  e.kind = std::move(kind);
  e.data = std::move(data);
  e.at = t0 + seq * 1'000'000;
  return e;
}

std::vector<event> timeline() {
  return {entry(1, "work.created", R"({"template":"incident"})"),
          entry(2, "work.comment", R"({"by":"alice","text":"db failover at 10:00"})"),
          entry(3, "work.run_started", R"({"run_id":"run_a","n":1,"created":true})"),
          entry(4, "work.comment", R"({"by":"bob","text":"leave payments-db alone"})"),
          entry(5, "work.triggered", R"({"by":"bob","text":"","action":"join"})"),
          entry(6, "work.triggered",
                R"({"by":"carol","text":"errors again in eu-west","action":"attach"})"),
          entry(7, "work.triggered", R"({"by":"dan","text":"and again","action":"queue"})"),
          entry(8, "work.run_ended", R"({"run_id":"run_a","state":"succeeded"})"),
          entry(9, "work.comment", R"({"by":"alice","text":"   "})")};
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

} // namespace

CAF_TEST(what was said and what the active run hears) {
  auto all = said_on(timeline());
  CAF_REQUIRE_EQUAL(all.size(), 4u); // a trigger without text and a blank comment say nothing
  CAF_CHECK_EQUAL(all[0].by, "alice");
  CAF_CHECK_EQUAL(all[1].text, "leave payments-db alone");
  CAF_CHECK_EQUAL(all[2].kind, "work.triggered");
  auto since = said_since(timeline(), "run_a");
  CAF_REQUIRE_EQUAL(since.size(), 2u); // not before it started, nor a trigger it did not take
  CAF_CHECK_EQUAL(since[0].seq, 4);
  CAF_CHECK_EQUAL(since[1].seq, 6);
  CAF_CHECK(said_since(timeline(), "run_other").empty());
  work w;
  w.id = "wrk_1";
  CAF_CHECK_EQUAL(message_key(w, 4), "work:wrk_1:4");
}

CAF_TEST(a new run starts with the work what was said and what earlier runs concluded) {
  work w;
  w.id = "wrk_1";
  w.kind = "incident";
  w.title = "payments: 5xx above 5%";
  w.severity = "sev2";
  w.fields = R"({"service":"payments","summary":"5xx above 5%"})";
  std::vector<earlier_run> runs{{"run_a", "succeeded", "bad_deploy on payments; rolled back"}};
  auto text = run_context(w, said_on(timeline()), runs);
  CAF_CHECK(contains(text, "Work wrk_1 (incident, open, sev2): payments: 5xx above 5%"));
  CAF_CHECK(contains(text, "service=payments"));
  CAF_CHECK(contains(text, "- bob at 2025-12-06T05:46:44"));
  CAF_CHECK(contains(text, ": leave payments-db alone"));
  CAF_CHECK(contains(text, "- carol at "));
  CAF_CHECK(contains(text, "(triggering a run): errors again in eu-west"));
  CAF_CHECK(contains(text, "- run_a succeeded: bad_deploy on payments; rolled back"));
  // Too long: the oldest words go first, and the text says so; the newest stay.
  std::vector<said> many;
  for (int i = 0; i < 200; ++i)
    many.push_back({i + 10, "work.comment", "alice", "comment number " + std::to_string(i), t0});
  auto bounded = run_context(w, many, runs, 2048);
  CAF_CHECK_LESS_OR_EQUAL(bounded.size(), 2048u);
  CAF_CHECK(contains(bounded, "earlier left out]"));
  CAF_CHECK(contains(bounded, "comment number 199"));
  CAF_CHECK(!contains(bounded, "comment number 0\n"));
  CAF_CHECK(contains(bounded, "run_a succeeded"));
}
