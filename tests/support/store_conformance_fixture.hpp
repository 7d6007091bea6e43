#pragma once
// The fixture and helpers of the store conformance suite: a fresh store per test, builders of
// runs, steps and events, and field-by-field comparisons.

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tests/support/store_factory.hpp"

namespace sreh::test {

using namespace sreh::persistence;

inline std::string pad(int i) {
  return fmt::format("{:06d}", i);
}

inline run make_run(std::string id, std::string key = {}) {
  run r;
  r.id = std::move(id);
  r.goal = "checkout p99 latency is high";
  r.idempotency_key = std::move(key);
  r.node_id = "n1";
  r.created_at = 1'700'000'000'000'000;
  r.updated_at = r.created_at;
  return r;
}

inline event make_event(std::string id, std::string run_id, std::int64_t run_seq,
                        std::string kind = "run.created") {
  event e;
  e.id = std::move(id);
  e.run_id = std::move(run_id);
  e.run_seq = run_seq;
  e.kind = std::move(kind);
  e.at = 1'700'000'000'000'000 + run_seq;
  e.data = fmt::format(R"({{"n":{}}})", run_seq);
  return e;
}

/// An approval of step `step_n` of `run_id` with every field set to something.
inline approval make_approval(std::string id, std::string run_id, std::int64_t step_n = 1) {
  approval a;
  a.id = std::move(id);
  a.run_id = std::move(run_id);
  a.step_n = step_n;
  a.tool = "sandbox.restart";
  a.args = R"({"service":"checkout"})";
  a.rule_id = "prod-writes";
  a.reason = "restarts in production need an approver";
  a.roles = {"approver"};
  a.requester = "alice";
  a.created_at = 1'700'000'000'000'000 + step_n;
  a.expires_at = a.created_at + 900'000'000;
  return a;
}

/// A batch that creates `id` with one run.created event.
inline write_batch create_batch(const std::string& id, std::string key = {}) {
  write_batch b;
  b.create = make_run(id, std::move(key));
  b.events.push_back(make_event("evt_" + id, id, 1));
  return b;
}

struct fixture {
  test::temp_dir dir;
  store_ptr st;

  fixture() {
    if (dir.path().empty())
      CAF_FAIL("mkdtemp failed");
    reopen();
  }

  void reopen() {
    st.reset();
    auto s = test::open_test_store(dir.path());
    if (!s)
      CAF_FAIL("cannot open the test store: " << s.error().message);
    st = std::move(*s);
  }

  /// Commits `bs` and requires success of the transaction.
  std::vector<commit_result> commit_ok(std::vector<write_batch> bs) {
    auto rs = st->commit(bs);
    CAF_REQUIRE_EQUAL(rs.size(), bs.size());
    for (auto& r : rs)
      CAF_REQUIRE_EQUAL(r.err.message, "");
    return rs;
  }

  commit_result commit_one(write_batch b) {
    std::vector<write_batch> bs;
    bs.push_back(std::move(b));
    return std::move(commit_ok(std::move(bs)).front());
  }

  run get(const std::string& id) {
    auto r = st->get_run(id);
    CAF_REQUIRE(r.has_value());
    if (!r->has_value())
      CAF_FAIL("no run " << id);
    return **r;
  }

  std::vector<event> all_events(const std::string& run_id = {}) {
    std::vector<event> out;
    event_filter f;
    f.run_id = run_id;
    f.limit = 10'000;
    for (;;) {
      auto page = st->read_events(f);
      CAF_REQUIRE(page.has_value());
      if (page->empty())
        return out;
      f.after_seq = page->back().seq;
      out.insert(out.end(), page->begin(), page->end());
    }
  }

  approval get_approval(const std::string& id) {
    auto a = st->get_approval(id);
    CAF_REQUIRE(a.has_value());
    if (!a->has_value())
      CAF_FAIL("no approval " << id);
    return **a;
  }

  /// The ids of every page of `f` (newest first), following the cursor.
  std::vector<std::string> approval_ids(approval_filter f) {
    std::vector<std::string> ids;
    for (;;) {
      auto page = st->list_approvals(f);
      CAF_REQUIRE(page.has_value());
      for (auto& a : page->approvals)
        ids.push_back(a.id);
      if (page->next_cursor.empty())
        return ids;
      CAF_REQUIRE_EQUAL(page->next_cursor, page->approvals.back().id);
      f.before_id = page->next_cursor;
    }
  }

  store_stats stats() {
    auto s = st->stats();
    CAF_REQUIRE(s.has_value());
    return *s;
  }
};

inline void check_same_run(const run& a, const run& b) {
  CAF_CHECK_EQUAL(a.id, b.id);
  CAF_CHECK_EQUAL(a.goal, b.goal);
  CAF_CHECK_EQUAL(static_cast<int>(a.state), static_cast<int>(b.state));
  CAF_CHECK_EQUAL(static_cast<int>(a.waiting_for), static_cast<int>(b.waiting_for));
  CAF_CHECK_EQUAL(a.submitter, b.submitter);
  CAF_CHECK_EQUAL(a.idempotency_key, b.idempotency_key);
  CAF_CHECK_EQUAL(a.node_id, b.node_id);
  CAF_CHECK_EQUAL(a.created_at, b.created_at);
  CAF_CHECK_EQUAL(a.updated_at, b.updated_at);
  CAF_CHECK_EQUAL(a.steps, b.steps);
  CAF_CHECK_EQUAL(a.tokens, b.tokens);
  CAF_CHECK_EQUAL(a.budget.max_steps, b.budget.max_steps);
  CAF_CHECK_EQUAL(a.budget.max_tokens, b.budget.max_tokens);
  CAF_CHECK_EQUAL(a.budget.deadline_us, b.budget.deadline_us);
  CAF_CHECK_EQUAL(a.budget.max_result_bytes, b.budget.max_result_bytes);
  CAF_CHECK_EQUAL(a.budget.max_cost, b.budget.max_cost);
  CAF_CHECK_EQUAL(a.checkpoint, b.checkpoint);
  CAF_CHECK_EQUAL(a.conclusion, b.conclusion);
  CAF_CHECK_EQUAL(a.error, b.error);
  CAF_CHECK_EQUAL(a.labels, b.labels);
}

inline void check_same_step(const step& a, const step& b) {
  CAF_CHECK_EQUAL(a.run_id, b.run_id);
  CAF_CHECK_EQUAL(a.n, b.n);
  CAF_CHECK_EQUAL(static_cast<int>(a.kind), static_cast<int>(b.kind));
  CAF_CHECK_EQUAL(static_cast<int>(a.state), static_cast<int>(b.state));
  CAF_CHECK_EQUAL(a.tool, b.tool);
  CAF_CHECK_EQUAL(a.args, b.args);
  CAF_CHECK_EQUAL(a.idempotency_key, b.idempotency_key);
  CAF_CHECK_EQUAL(a.decision, b.decision);
  CAF_CHECK_EQUAL(a.result, b.result);
  CAF_CHECK_EQUAL(a.error, b.error);
  CAF_CHECK_EQUAL(a.result_truncated, b.result_truncated);
  CAF_CHECK_EQUAL(a.started_at, b.started_at);
  CAF_CHECK_EQUAL(a.finished_at, b.finished_at);
  CAF_CHECK_EQUAL(a.attempts, b.attempts);
}

inline void check_same_approval(const approval& a, const approval& b) {
  CAF_CHECK_EQUAL(a.id, b.id);
  CAF_CHECK_EQUAL(a.run_id, b.run_id);
  CAF_CHECK_EQUAL(a.step_n, b.step_n);
  CAF_CHECK_EQUAL(static_cast<int>(a.kind), static_cast<int>(b.kind));
  CAF_CHECK_EQUAL(static_cast<int>(a.state), static_cast<int>(b.state));
  CAF_CHECK_EQUAL(a.tool, b.tool);
  CAF_CHECK_EQUAL(a.args, b.args);
  CAF_CHECK_EQUAL(a.rule_id, b.rule_id);
  CAF_CHECK_EQUAL(a.reason, b.reason);
  CAF_CHECK_EQUAL(a.required, b.required);
  CAF_CHECK_EQUAL(a.roles, b.roles);
  CAF_CHECK_EQUAL(a.requester, b.requester);
  CAF_REQUIRE_EQUAL(a.votes.size(), b.votes.size());
  for (std::size_t i = 0; i < a.votes.size(); ++i) {
    CAF_CHECK_EQUAL(a.votes[i].by, b.votes[i].by);
    CAF_CHECK_EQUAL(a.votes[i].role, b.votes[i].role);
    CAF_CHECK_EQUAL(a.votes[i].approve, b.votes[i].approve);
    CAF_CHECK_EQUAL(a.votes[i].comment, b.votes[i].comment);
    CAF_CHECK_EQUAL(a.votes[i].at, b.votes[i].at);
  }
  CAF_CHECK_EQUAL(a.created_at, b.created_at);
  CAF_CHECK_EQUAL(a.expires_at, b.expires_at);
  CAF_CHECK_EQUAL(a.on_timeout, b.on_timeout);
  CAF_CHECK_EQUAL(a.escalate_to, b.escalate_to);
  CAF_CHECK_EQUAL(a.escalated, b.escalated);
  CAF_CHECK_EQUAL(a.decided_at, b.decided_at);
}

inline void check_same_event(const event& a, const event& b) {
  CAF_CHECK_EQUAL(a.seq, b.seq);
  CAF_CHECK_EQUAL(a.id, b.id);
  CAF_CHECK_EQUAL(a.run_id, b.run_id);
  CAF_CHECK_EQUAL(a.run_seq, b.run_seq);
  CAF_CHECK_EQUAL(a.kind, b.kind);
  CAF_CHECK_EQUAL(a.at, b.at);
  CAF_CHECK_EQUAL(a.data, b.data);
}

} // namespace sreh::test
