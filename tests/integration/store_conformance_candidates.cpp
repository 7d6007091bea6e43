// The store contract for the evolution gate's candidates (candidate_store.hpp), run against the
// backend named by SREH_TEST_STORE (store_factory.hpp): a candidate commits with its event,
// reads back whole, an upsert replaces it, the list is newest first, a failed commit leaves it.
#define CAF_SUITE store_conformance_candidates
#include "tests/support/caf_test.hpp"
#include "tests/support/store_conformance_fixture.hpp"

using namespace sreh;
using namespace sreh::persistence;
using sreh::test::make_approval;
using sreh::test::make_event;
using sreh::test::make_run;

namespace {

constexpr timestamp_us t0 = 1'700'000'000'000'000;

evolve::candidate make_candidate(std::string id, timestamp_us created_at = t0) {
  evolve::candidate c;
  c.id = std::move(id);
  c.proposer = "alice";
  c.reason = "pool exhaustion rules \"first\" ✓";
  c.body = "rules:\n  - id: pool\n    when: connection pool exhausted\n";
  c.sha256 = std::string(64, 'a');
  c.created_at = created_at;
  return c;
}

/// A batch that writes `c` with one `candidate.*` event.
write_batch candidate_batch(const evolve::candidate& c, std::string kind = "candidate.proposed") {
  static int batches = 0; // event ids are unique, as the node's are
  write_batch b;
  b.candidates.push_back(c);
  b.events.push_back(
    make_event("evt_" + c.id + "_" + std::to_string(++batches), c.id, c.revision, std::move(kind)));
  return b;
}

struct candidate_fixture : test::fixture {
  evolve::candidate stored(const std::string& id) {
    auto c = st->get_candidate(id);
    CAF_REQUIRE(c.has_value());
    if (!c->has_value())
      CAF_FAIL("no candidate " << id);
    return **c;
  }

  std::vector<std::string> listed(int limit) {
    auto all = st->list_candidates(limit);
    CAF_REQUIRE(all.has_value());
    std::vector<std::string> ids;
    for (const auto& c : *all)
      ids.push_back(c.id);
    return ids;
  }
};

void check_same_candidate(const evolve::candidate& a, const evolve::candidate& b) {
  CAF_CHECK_EQUAL(a.id, b.id);
  CAF_CHECK_EQUAL(a.revision, b.revision);
  CAF_CHECK(a.kind == b.kind);
  CAF_CHECK(a.state == b.state);
  CAF_CHECK_EQUAL(a.proposer, b.proposer);
  CAF_CHECK_EQUAL(a.reason, b.reason);
  CAF_CHECK_EQUAL(a.body, b.body);
  CAF_CHECK_EQUAL(a.sha256, b.sha256);
  CAF_CHECK_EQUAL(a.base, b.base);
  CAF_CHECK_EQUAL(a.report, b.report);
  CAF_CHECK_EQUAL(a.regressions, b.regressions);
  CAF_CHECK_EQUAL(a.error, b.error);
  CAF_CHECK_EQUAL(a.promotion.has_value(), b.promotion.has_value());
  if (a.promotion && b.promotion)
    test::check_same_approval(*a.promotion, *b.promotion);
  CAF_CHECK_EQUAL(a.created_at, b.created_at);
  CAF_CHECK_EQUAL(a.evaluated_at, b.evaluated_at);
  CAF_CHECK_EQUAL(a.promoted_at, b.promoted_at);
}

} // namespace

CAF_TEST_FIXTURE_SCOPE(store_conformance_candidates_tests, candidate_fixture)

CAF_TEST(a candidate commits with its event and reads back by id and in the list) {
  const auto c = make_candidate("cnd_01");
  auto r = commit_one(candidate_batch(c));
  CAF_REQUIRE_EQUAL(r.events.size(), 1u);
  CAF_CHECK_EQUAL(r.events[0].seq, 1);
  check_same_candidate(stored("cnd_01"), c);
  CAF_CHECK_EQUAL(listed(10), std::vector<std::string>{"cnd_01"});
  auto events = all_events("cnd_01");
  CAF_REQUIRE_EQUAL(events.size(), 1u);
  CAF_CHECK_EQUAL(events[0].kind, "candidate.proposed");
  reopen();
  check_same_candidate(stored("cnd_01"), c);
  auto none = st->get_candidate("cnd_missing");
  CAF_REQUIRE(none.has_value());
  CAF_CHECK(!none->has_value());
}

CAF_TEST(an unknown id is absent and an empty store lists nothing) {
  auto none = st->get_candidate("cnd_missing");
  CAF_REQUIRE(none.has_value());
  CAF_CHECK(!none->has_value());
  CAF_CHECK(listed(10).empty());
}

CAF_TEST(an upsert replaces the stored candidate whole) {
  auto c = make_candidate("cnd_01");
  commit_one(candidate_batch(c));
  c.revision = 2;
  c.state = evolve::candidate_state::awaiting_approval;
  c.report = R"({"suites":[{"name":"payments","passed":3}]})";
  c.regressions = {"replay run_7 step 3: the conclusion changed"};
  c.evaluated_at = t0 + 5'000'000;
  c.promotion = make_approval("apr_cnd_01", "cnd_01");
  c.promotion->requester = "alice";
  c.promotion->votes = {approval_vote{"bob", "approver", true, "ok", t0 + 6'000'000}};
  commit_one(candidate_batch(c, "candidate.evaluated"));
  auto got = stored("cnd_01");
  CAF_CHECK_EQUAL(std::string{evolve::to_string(got.state)}, "awaiting_approval");
  check_same_candidate(got, c);
  CAF_CHECK_EQUAL(listed(10), std::vector<std::string>{"cnd_01"});
  // A change back that drops what the last one set drops it in the store too.
  c.revision = 3;
  c.state = evolve::candidate_state::failed;
  c.promotion.reset();
  c.regressions.clear();
  c.error = "suite payments does not load";
  commit_one(candidate_batch(c, "candidate.failed"));
  reopen();
  got = stored("cnd_01");
  check_same_candidate(got, c);
  CAF_CHECK(!got.promotion.has_value());
  CAF_CHECK_EQUAL(all_events("cnd_01").size(), 3u);
}

CAF_TEST(the list is newest first by created_at then id and clamps its limit) {
  std::vector<write_batch> bs;
  bs.push_back(candidate_batch(make_candidate("cnd_b", t0 + 2)));
  bs.push_back(candidate_batch(make_candidate("cnd_a", t0 + 2)));
  bs.push_back(candidate_batch(make_candidate("cnd_z", t0)));
  bs.push_back(candidate_batch(make_candidate("cnd_c", t0 + 1)));
  commit_ok(std::move(bs));
  const std::vector<std::string> newest{"cnd_b", "cnd_a", "cnd_c", "cnd_z"};
  CAF_CHECK_EQUAL(listed(10), newest);
  CAF_CHECK_EQUAL(listed(2), (std::vector<std::string>{"cnd_b", "cnd_a"}));
  CAF_CHECK_EQUAL(listed(0), std::vector<std::string>{"cnd_b"}); // at least one
  CAF_CHECK_EQUAL(listed(-5), std::vector<std::string>{"cnd_b"});
  CAF_CHECK_EQUAL(listed(1'000'000), newest); // clamped to 500, not refused
  // An upsert keeps its place: the order is by created_at, not by the last write.
  auto z = make_candidate("cnd_z", t0);
  z.state = evolve::candidate_state::refused;
  commit_one(candidate_batch(z, "candidate.refused"));
  CAF_CHECK_EQUAL(listed(10), newest);
}

CAF_TEST(a failed commit writes no candidate and keeps the stored one) {
  auto c = make_candidate("cnd_01");
  commit_one(candidate_batch(c));
  auto changed = c;
  changed.revision = 2;
  changed.state = evolve::candidate_state::promoted;
  std::vector<write_batch> bs;
  bs.push_back(candidate_batch(changed, "candidate.promoted"));
  bs.push_back(candidate_batch(make_candidate("cnd_02", t0 + 1)));
  write_batch bad; // an update of a run that does not exist fails the whole commit
  bad.update = make_run("run_missing");
  bad.events.push_back(make_event("evt_bad", "run_missing", 1));
  bs.push_back(std::move(bad));
  auto rs = st->commit(bs);
  CAF_REQUIRE_EQUAL(rs.size(), 3u);
  for (const auto& r : rs)
    CAF_CHECK_EQUAL(static_cast<int>(r.err.code), static_cast<int>(errc::internal));
  CAF_CHECK_EQUAL(std::string{evolve::to_string(stored("cnd_01").state)}, "evaluating");
  CAF_CHECK(!st->get_candidate("cnd_02")->has_value());
  CAF_CHECK_EQUAL(listed(10), std::vector<std::string>{"cnd_01"});
  CAF_CHECK_EQUAL(stats().last_event_seq, 1);
  // The batches were left as given: committed again without the bad one, they apply.
  bs.pop_back();
  commit_ok(std::move(bs));
  CAF_CHECK_EQUAL(std::string{evolve::to_string(stored("cnd_01").state)}, "promoted");
  CAF_CHECK_EQUAL(listed(10), (std::vector<std::string>{"cnd_02", "cnd_01"}));
}

CAF_TEST_FIXTURE_SCOPE_END()
