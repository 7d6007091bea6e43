// The store contract for approvals and executed tool steps (store.hpp), run against the backend
// named by SREH_TEST_STORE (see store_factory.hpp). Every test gets a fresh store.
#define CAF_SUITE store_conformance_approvals
#include <algorithm>

#include "tests/support/caf_test.hpp"
#include "tests/support/store_conformance_fixture.hpp"

using namespace sreh;
using namespace sreh::persistence;
using sreh::test::check_same_approval;
using sreh::test::check_same_step;
using sreh::test::create_batch;
using sreh::test::make_approval;
using sreh::test::make_event;
using sreh::test::make_run;
using sreh::test::pad;

namespace {

write_batch approvals_batch(std::vector<approval> as) {
  write_batch b;
  b.approvals = std::move(as);
  return b;
}

std::vector<std::string> ids_of(const std::vector<approval>& as) {
  std::vector<std::string> out;
  for (const auto& a : as)
    out.push_back(a.id);
  return out;
}

} // namespace

CAF_TEST_FIXTURE_SCOPE(store_conformance_approvals_tests, sreh::test::fixture)

CAF_TEST(an approval round trips every field and survives a reopen) {
  approval a;
  a.id = "apr_01HZROUNDTRIP";
  a.run_id = "run_a";
  a.step_n = 7;
  a.kind = approval_kind::in_doubt;
  a.state = approval_state::denied;
  a.tool = "kubectl.rollout_restart";
  a.args = R"({"deployment":"checkout","note":"ü \"q\""})";
  a.rule_id = "prod-restarts";
  a.reason = "line one\nline \"two\" ✓";
  a.required = 3;
  a.roles = {"approver", "admin", "on-call \"sre\""};
  a.requester = "alice@example.com";
  a.votes = {approval_vote{"bob", "approver", true, "looks right ✓", 1'700'000'000'000'111},
             approval_vote{"carol", "admin", false, "", 1'700'000'000'000'222}};
  a.created_at = 1'700'000'000'000'001;
  a.expires_at = 1'700'000'900'000'001;
  a.on_timeout = "escalate";
  a.escalate_to = {"admin"};
  a.escalated = true;
  a.decided_at = 1'700'000'000'000'222;
  auto b = create_batch("run_a");
  b.approvals.push_back(a);
  commit_one(std::move(b));
  check_same_approval(get_approval(a.id), a);
  approval empty_lists = make_approval("apr_empty", "run_a", 8);
  empty_lists.roles.clear();
  empty_lists.tool.clear();
  empty_lists.rule_id.clear();
  commit_one(approvals_batch({empty_lists}));
  check_same_approval(get_approval("apr_empty"), empty_lists);
  reopen();
  check_same_approval(get_approval(a.id), a);
  auto missing = st->get_approval("apr_nope");
  CAF_REQUIRE(missing.has_value());
  CAF_CHECK(!missing->has_value());
}

CAF_TEST(upsert replaces votes and state of an approval) {
  auto a = make_approval("apr_1", "run_a", 2);
  a.required = 2;
  auto b = create_batch("run_a");
  b.approvals.push_back(a);
  commit_one(std::move(b));
  a.votes.push_back(approval_vote{"bob", "approver", true, "ok", 10});
  commit_one(approvals_batch({a}));
  check_same_approval(get_approval("apr_1"), a);
  a.votes.push_back(approval_vote{"carol", "admin", true, "", 20});
  a.state = approval_state::approved;
  a.decided_at = 20;
  write_batch decided = approvals_batch({a});
  decided.events.push_back(make_event("evt_decided", "run_a", 2, "approval.approved"));
  commit_one(std::move(decided));
  check_same_approval(get_approval("apr_1"), a);
  auto all = st->list_approvals(approval_filter{});
  CAF_REQUIRE(all.has_value());
  CAF_CHECK_EQUAL(all->approvals.size(), 1u);
  CAF_CHECK(st->pending_approvals()->empty());
}

CAF_TEST(list approvals pages newest first with state and run filters) {
  const approval_state states[] = {approval_state::pending, approval_state::approved,
                                   approval_state::denied, approval_state::expired};
  std::vector<approval> as;
  for (int i = 0; i < 120; ++i) {
    auto a = make_approval("apr_" + pad(i), i % 3 == 0 ? "run_a" : "run_b", i);
    a.state = states[i % 4];
    as.push_back(std::move(a));
  }
  commit_one(approvals_batch(as));
  approval_filter f;
  f.limit = 50;
  std::vector<std::size_t> sizes;
  std::vector<std::string> seen;
  for (;;) {
    auto page = st->list_approvals(f);
    CAF_REQUIRE(page.has_value());
    sizes.push_back(page->approvals.size());
    for (auto& a : page->approvals)
      seen.push_back(a.id);
    if (page->next_cursor.empty())
      break;
    CAF_CHECK_EQUAL(page->next_cursor, page->approvals.back().id);
    f.before_id = page->next_cursor;
  }
  CAF_CHECK_EQUAL(sizes, (std::vector<std::size_t>{50, 50, 20}));
  CAF_REQUIRE_EQUAL(seen.size(), 120u);
  for (std::size_t i = 0; i < seen.size(); ++i)
    CAF_CHECK_EQUAL(seen[i], "apr_" + pad(119 - static_cast<int>(i)));
  // State: 30 pending (0, 4, ..., 116); a full page of exactly 30 has no next cursor.
  approval_filter pending;
  pending.state = approval_state::pending;
  pending.limit = 30;
  auto page = st->list_approvals(pending);
  CAF_REQUIRE(page.has_value());
  CAF_CHECK_EQUAL(page->approvals.size(), 30u);
  CAF_CHECK_EQUAL(page->next_cursor, "");
  CAF_CHECK_EQUAL(page->approvals.front().id, "apr_" + pad(116));
  for (auto& a : page->approvals)
    CAF_CHECK_EQUAL(static_cast<int>(a.state), static_cast<int>(approval_state::pending));
  pending.limit = 7;
  pending.before_id = "apr_" + pad(100);
  page = st->list_approvals(pending);
  CAF_REQUIRE_EQUAL(page->approvals.size(), 7u);
  CAF_CHECK_EQUAL(page->approvals.front().id, "apr_" + pad(96));
  CAF_CHECK_EQUAL(page->next_cursor, "apr_" + pad(72));
  // Run: run_a holds 0, 3, ..., 117 (40); with a state: multiples of 12 are pending in run_a.
  approval_filter by_run;
  by_run.run_id = "run_a";
  by_run.limit = 15;
  auto run_a = approval_ids(by_run);
  CAF_REQUIRE_EQUAL(run_a.size(), 40u);
  CAF_CHECK_EQUAL(run_a.front(), "apr_" + pad(117));
  CAF_CHECK_EQUAL(run_a.back(), "apr_" + pad(0));
  by_run.state = approval_state::pending;
  by_run.limit = 4;
  auto run_a_pending = approval_ids(by_run);
  CAF_REQUIRE_EQUAL(run_a_pending.size(), 10u);
  CAF_CHECK_EQUAL(run_a_pending.front(), "apr_" + pad(108));
  CAF_CHECK(approval_ids(approval_filter{approval_state::expired, "run_none", {}, {}, 50}).empty());
  // A cached query must not keep the filters of its previous use.
  CAF_CHECK_EQUAL(approval_ids(approval_filter{}).size(), 120u);
  approval_filter clamp;
  clamp.limit = 0;
  CAF_CHECK_EQUAL(st->list_approvals(clamp)->approvals.size(), 1u);
  clamp.limit = -3;
  CAF_CHECK_EQUAL(st->list_approvals(clamp)->approvals.size(), 1u);
}

CAF_TEST(list approvals clamps the limit to 500) {
  std::vector<approval> as;
  for (int i = 0; i < 501; ++i)
    as.push_back(make_approval("apr_" + pad(i), "run_a", i));
  commit_one(approvals_batch(as));
  approval_filter f;
  f.limit = 10'000;
  auto page = st->list_approvals(f);
  CAF_REQUIRE(page.has_value());
  CAF_CHECK_EQUAL(page->approvals.size(), 500u);
  CAF_CHECK_EQUAL(page->next_cursor, "apr_" + pad(1));
}

CAF_TEST(the role filter keeps the approvals a role may decide) {
  // The rule of apply_vote: a role may decide when it ranks at least as high as the lowest
  // known role of the approval; an approval naming no known role needs an approver.
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
    {"apr_1_viewer", {"viewer"}},
    {"apr_2_operator", {"admin", "operator"}},
    {"apr_3_approver", {"approver"}},
    {"apr_4_admin", {"admin"}},
    {"apr_5_none", {}},
    {"apr_6_unknown", {"on-call"}},
    {"apr_7_mixed", {"on-call", "admin"}},
  };
  std::vector<approval> as;
  for (const auto& [id, roles] : cases) {
    auto a = make_approval(id, "run_a");
    a.roles = roles;
    as.push_back(std::move(a));
  }
  commit_one(approvals_batch(as));
  auto visible = [this](std::string role, int limit = 50) {
    approval_filter f;
    f.role = std::move(role);
    f.limit = limit;
    auto ids = approval_ids(f);
    std::sort(ids.begin(), ids.end());
    return ids;
  };
  using ids = std::vector<std::string>;
  CAF_CHECK_EQUAL(visible("viewer"), (ids{"apr_1_viewer"}));
  CAF_CHECK_EQUAL(visible("operator"), (ids{"apr_1_viewer", "apr_2_operator"}));
  CAF_CHECK_EQUAL(visible("approver"), (ids{"apr_1_viewer", "apr_2_operator", "apr_3_approver",
                                            "apr_5_none", "apr_6_unknown"}));
  CAF_CHECK_EQUAL(visible("admin").size(), cases.size());
  CAF_CHECK_EQUAL(visible("admin", 2).size(), cases.size()); // the filter holds across pages
  CAF_CHECK_EQUAL(visible("").size(), cases.size());         // no role: no filter
  CAF_CHECK(visible("on-call").empty());                     // unknown roles decide nothing
  approval_filter both;
  both.role = "operator";
  both.state = approval_state::pending;
  CAF_CHECK_EQUAL(approval_ids(both).size(), 2u);
  both.state = approval_state::approved;
  CAF_CHECK(approval_ids(both).empty());
}

CAF_TEST(pending approvals oldest first) {
  std::vector<approval> as;
  for (int i = 0; i < 6; ++i) {
    auto a = make_approval("apr_" + pad(i), "run_a", i);
    a.created_at = 1'000 - i * 10; // later ids are older
    a.state = i == 2 ? approval_state::approved : approval_state::pending;
    as.push_back(std::move(a));
  }
  as[4].created_at = as[5].created_at; // a tie is ordered by id
  commit_one(approvals_batch(as));
  auto pending = st->pending_approvals();
  CAF_REQUIRE(pending.has_value());
  CAF_CHECK_EQUAL(ids_of(*pending),
                  (std::vector<std::string>{"apr_" + pad(4), "apr_" + pad(5), "apr_" + pad(3),
                                            "apr_" + pad(1), "apr_" + pad(0)}));
}

CAF_TEST(approval for step is the newest of that step) {
  auto first = make_approval("apr_b_first", "run_a", 3);
  first.created_at = 100;
  first.state = approval_state::expired;
  auto second = make_approval("apr_a_second", "run_a", 3); // a smaller id, but newer
  second.created_at = 200;
  auto other_run = make_approval("apr_c", "run_b", 3);
  other_run.created_at = 300;
  commit_one(approvals_batch({first, second, other_run}));
  auto found = st->approval_for_step("run_a", 3);
  CAF_REQUIRE(found.has_value());
  CAF_REQUIRE(found->has_value());
  check_same_approval(**found, second);
  CAF_CHECK_EQUAL(st->approval_for_step("run_b", 3)->value_or(approval{}).id, "apr_c");
  CAF_CHECK(!st->approval_for_step("run_a", 4)->has_value());
  CAF_CHECK(!st->approval_for_step("run_z", 3)->has_value());
}

CAF_TEST(rate counted tool steps are the successful ones then the running intents since a time) {
  commit_one(create_batch("run_a"));
  commit_one(create_batch("run_b"));
  auto parked = create_batch("run_c");
  parked.create->state = run_state::waiting;
  commit_one(std::move(parked));
  std::vector<step> steps;
  auto add = [&steps](std::string run_id, std::int64_t n, step_kind k, step_state s,
                      timestamp_us finished) {
    step x;
    x.run_id = std::move(run_id);
    x.n = n;
    x.kind = k;
    x.state = s;
    x.tool = "sandbox.restart";
    x.started_at = finished - 5;
    x.finished_at = finished;
    steps.push_back(x);
  };
  add("run_a", 1, step_kind::tool, step_state::succeeded, 100); // before `since`
  add("run_a", 2, step_kind::tool, step_state::succeeded, 300);
  add("run_a", 3, step_kind::tool, step_state::failed, 310);      // failed
  add("run_a", 4, step_kind::reason, step_state::succeeded, 320); // not a tool
  add("run_a", 5, step_kind::tool, step_state::intent, 0);        // started before `since`
  add("run_b", 1, step_kind::tool, step_state::succeeded, 200);   // exactly `since`
  add("run_b", 2, step_kind::tool, step_state::succeeded, 250);
  add("run_b", 3, step_kind::tool, step_state::in_doubt, 260);
  add("run_b", 4, step_kind::tool, step_state::intent, 0);   // running, started at 400
  add("run_b", 5, step_kind::reason, step_state::intent, 0); // not a tool
  add("run_a", 6, step_kind::tool, step_state::intent, 0);   // running, started at 350
  add("run_c", 1, step_kind::tool, step_state::intent, 0);   // its run waits: not running
  steps[4].started_at = 100;
  steps[8].started_at = 400;
  steps[9].started_at = 410;
  steps[10].started_at = 350;
  steps[11].started_at = 380;
  for (auto i : {4, 8, 9, 10, 11})
    steps[static_cast<std::size_t>(i)].finished_at = 0;
  write_batch b;
  b.steps = steps;
  commit_one(std::move(b));
  auto counted = st->rate_counted_tool_steps(200);
  CAF_REQUIRE(counted.has_value());
  CAF_REQUIRE_EQUAL(counted->size(), 5u);
  check_same_step(counted->at(0), steps[5]);
  check_same_step(counted->at(1), steps[6]);
  check_same_step(counted->at(2), steps[1]);
  check_same_step(counted->at(3), steps[10]);
  check_same_step(counted->at(4), steps[8]);
  CAF_CHECK_EQUAL(st->rate_counted_tool_steps(0)->size(), 7u);
  auto late = st->rate_counted_tool_steps(360);
  CAF_REQUIRE(late.has_value());
  CAF_REQUIRE_EQUAL(late->size(), 1u);
  check_same_step(late->at(0), steps[8]);
}

CAF_TEST(an approval in a failed transaction is not applied) {
  auto kept = make_approval("apr_kept", "run_a", 1);
  auto b = create_batch("run_a");
  b.approvals.push_back(kept);
  commit_one(std::move(b));
  std::vector<write_batch> bs;
  auto changed = kept;
  changed.state = approval_state::approved;
  changed.votes.push_back(approval_vote{"bob", "approver", true, "", 5});
  bs.push_back(approvals_batch({changed, make_approval("apr_new", "run_a", 2)}));
  write_batch bad;
  bad.update = make_run("run_missing");
  bs.push_back(std::move(bad));
  auto rs = st->commit(bs);
  CAF_REQUIRE_EQUAL(rs.size(), 2u);
  CAF_CHECK(static_cast<bool>(rs[0].err));
  CAF_CHECK_EQUAL(bs[0].approvals.size(), 2u); // left as given
  CAF_CHECK(!st->get_approval("apr_new")->has_value());
  check_same_approval(get_approval("apr_kept"), kept);
  CAF_CHECK_EQUAL(ids_of(*st->pending_approvals()), (std::vector<std::string>{"apr_kept"}));
}

CAF_TEST_FIXTURE_SCOPE_END()
