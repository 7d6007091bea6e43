// The store contract for runs' conversations (message_store.hpp), run against the backend named
// by SREH_TEST_STORE (store_factory.hpp): a message commits under (run, seq) and reads back
// whole, in order; a place or an idempotency key already held fails the commit and changes
// nothing; a step's batch marks a message taken, atomically with the step; the untaken ones are
// found per run and across runs.
#define CAF_SUITE store_conformance_messages
#include "tests/support/caf_test.hpp"
#include "tests/support/store_conformance_fixture.hpp"

using namespace sreh;
using namespace sreh::persistence;
using sreh::test::create_batch;
using sreh::test::make_event;
using sreh::test::make_run;

namespace {

constexpr timestamp_us t0 = 1'700'000'000'000'000;

conversation::message make_message(const std::string& run, std::int64_t seq, std::string text,
                                   std::string key = {}) {
  conversation::message m;
  m.id = "msg_" + run + "_" + std::to_string(seq);
  m.run_id = run;
  m.seq = seq;
  m.author = "alice";
  m.text = std::move(text);
  m.at = t0 + seq;
  m.idempotency_key = std::move(key);
  return m;
}

write_batch message_batch(conversation::message m) {
  write_batch b;
  b.messages.push_back(std::move(m));
  return b;
}

struct message_fixture : test::fixture {
  message_fixture() {
    std::vector<write_batch> bs;
    bs.push_back(create_batch("run_a"));
    bs.push_back(create_batch("run_b"));
    commit_ok(std::move(bs));
  }

  std::vector<std::string> texts(const std::string& run, std::int64_t after = 0, int limit = 100) {
    auto all = st->list_messages(run, after, limit);
    CAF_REQUIRE(all.has_value());
    std::vector<std::string> out;
    for (const auto& m : *all)
      out.push_back(m.text);
    return out;
  }

  std::vector<std::int64_t> untaken(const std::string& run) {
    auto all = st->untaken_messages(run);
    CAF_REQUIRE(all.has_value());
    std::vector<std::int64_t> out;
    for (const auto& m : *all)
      out.push_back(m.seq);
    return out;
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(store_conformance_messages_tests, message_fixture)

CAF_TEST(messages read back whole and in order per run) {
  auto first =
    make_message("run_a", 1, "do not touch \"checkout\" ✓\nit is being failed over", "k1");
  commit_one(message_batch(first));
  commit_one(message_batch(make_message("run_b", 1, "why checkout?")));
  auto reply = make_message("run_a", 2, "because of step 5");
  reply.author = "agent";
  reply.kind = conversation::message_kind::reply;
  reply.taken_step = 7;
  commit_one(message_batch(reply));
  reopen();
  auto all = st->list_messages("run_a", 0, 100);
  CAF_REQUIRE(all.has_value());
  CAF_REQUIRE_EQUAL(all->size(), 2u);
  const auto& m = all->front();
  CAF_CHECK_EQUAL(m.id, first.id);
  CAF_CHECK_EQUAL(m.run_id, "run_a");
  CAF_CHECK_EQUAL(m.seq, 1);
  CAF_CHECK_EQUAL(m.author, "alice");
  CAF_CHECK(m.kind == conversation::message_kind::message);
  CAF_CHECK_EQUAL(m.text, first.text);
  CAF_CHECK_EQUAL(m.at, first.at);
  CAF_CHECK_EQUAL(m.idempotency_key, "k1");
  CAF_CHECK_EQUAL(m.taken_step, 0);
  CAF_CHECK(all->back().kind == conversation::message_kind::reply);
  CAF_CHECK_EQUAL(all->back().taken_step, 7);
  CAF_CHECK_EQUAL(texts("run_a", 1), std::vector<std::string>{"because of step 5"});
  CAF_CHECK_EQUAL(texts("run_a", 0, 1).size(), 1u);
  CAF_CHECK(texts("run_missing").empty());
  auto last = st->last_message_seq("run_a");
  auto none = st->last_message_seq("run_missing");
  CAF_REQUIRE(last.has_value() && none.has_value());
  const std::int64_t last_seq = *last, no_seq = *none;
  CAF_CHECK_EQUAL(last_seq, 2);
  CAF_CHECK_EQUAL(no_seq, 0);
  auto by_key = st->message_by_key("run_a", "k1");
  CAF_REQUIRE(by_key.has_value() && by_key->has_value());
  CAF_CHECK_EQUAL((*by_key)->id, first.id);
  CAF_CHECK(!st->message_by_key("run_b", "k1")->has_value()); // a key is per run
  CAF_CHECK(!st->message_by_key("run_a", "")->has_value());
}

CAF_TEST(a taken place or key fails the whole commit and changes nothing) {
  commit_one(message_batch(make_message("run_a", 1, "first", "k1")));
  std::vector<write_batch> bs;
  bs.push_back(message_batch(make_message("run_b", 1, "other run")));
  auto again = make_message("run_a", 1, "second at the same place");
  again.id = "msg_other";
  bs.push_back(message_batch(again));
  auto rs = st->commit(bs);
  CAF_REQUIRE_EQUAL(rs.size(), 2u);
  CAF_CHECK(static_cast<bool>(rs[0].err));
  CAF_CHECK(texts("run_b").empty());
  CAF_CHECK_EQUAL(texts("run_a"), std::vector<std::string>{"first"});
  auto same_key = make_message("run_a", 2, "retried", "k1");
  std::vector<write_batch> retried;
  retried.push_back(message_batch(same_key));
  CAF_CHECK(static_cast<bool>(st->commit(retried).front().err));
  CAF_CHECK_EQUAL(texts("run_a"), std::vector<std::string>{"first"});
}

CAF_TEST(a step marks a message taken in its own transaction) {
  std::vector<write_batch> bs;
  bs.push_back(message_batch(make_message("run_a", 1, "check cart-cache first")));
  bs.push_back(message_batch(make_message("run_a", 2, "stop")));
  bs.push_back(message_batch(make_message("run_b", 1, "why?")));
  commit_ok(std::move(bs));
  CAF_CHECK_EQUAL(untaken("run_a"), (std::vector<std::int64_t>{1, 2}));
  auto runs = st->runs_with_untaken_messages();
  CAF_REQUIRE(runs.has_value());
  CAF_CHECK_EQUAL(*runs, (std::vector<std::string>{"run_a", "run_b"}));
  // The step that takes message 1, and the mark, commit together.
  write_batch take;
  step s;
  s.run_id = "run_a";
  s.n = 1;
  s.kind = step_kind::message;
  s.state = step_state::succeeded;
  s.args = R"({"seq":1})";
  s.result = R"({"form":"check_first"})";
  s.started_at = s.finished_at = t0;
  take.steps.push_back(s);
  take.taken.push_back({"run_a", 1, 1});
  take.events.push_back(make_event("evt_take", "run_a", 2, "run.message"));
  // A failing batch in the same commit undoes the mark too.
  write_batch bad;
  bad.update = make_run("run_missing");
  std::vector<write_batch> both;
  both.push_back(take);
  both.push_back(std::move(bad));
  auto rs = st->commit(both);
  CAF_CHECK(static_cast<bool>(rs[0].err));
  CAF_CHECK_EQUAL(untaken("run_a"), (std::vector<std::int64_t>{1, 2}));
  commit_one(take);
  reopen();
  CAF_CHECK_EQUAL(untaken("run_a"), std::vector<std::int64_t>{2});
  auto after_take = st->list_messages("run_a", 0, 10);
  CAF_REQUIRE(after_take.has_value() && !after_take->empty());
  const std::int64_t taken_at = after_take->front().taken_step;
  CAF_CHECK_EQUAL(taken_at, 1);
  write_batch rest;
  rest.taken.push_back({"run_a", 2, 2});
  rest.taken.push_back({"run_b", 1, 1});
  commit_one(std::move(rest));
  CAF_CHECK(untaken("run_a").empty());
  CAF_CHECK(st->runs_with_untaken_messages()->empty());
}

CAF_TEST_FIXTURE_SCOPE_END()
