#include "persistence/sqlite/rows.hpp"

#include <fmt/format.h>

namespace sreh::persistence::sqlite {

namespace {

sreh::error bad_column(std::string_view table, std::string_view column, std::string_view value,
                       std::string_view id) {
  return {errc::internal,
          fmt::format("sqlite: {}.{}: unknown value '{}' in row {}", table, column, value, id)};
}

} // namespace

void bind_run(stmt_use& q, const run& r) {
  q.bind(1, r.id)
    .bind(2, r.goal)
    .bind(3, to_string(r.state))
    .bind(4, to_string(r.waiting_for))
    .bind(5, r.submitter)
    .bind(6, r.idempotency_key)
    .bind(7, r.node_id)
    .bind(8, r.created_at)
    .bind(9, r.updated_at)
    .bind(10, r.steps)
    .bind(11, r.tokens)
    .bind(12, r.budget.max_steps)
    .bind(13, r.budget.max_tokens)
    .bind(14, r.budget.deadline_us)
    .bind(15, r.budget.max_result_bytes)
    .bind(16, r.checkpoint)
    .bind(17, r.conclusion)
    .bind(18, r.error)
    .bind(19, r.labels)
    .bind(20, r.kind)
    .bind(21, r.parent)
    .bind(22, r.spec)
    .bind(23, r.budget.max_cost)
    .bind(24, r.outcome);
}

expected<run> read_run(const stmt_use& q) {
  run r;
  r.id = q.text(0);
  r.goal = q.text(1);
  const auto state = q.text(2);
  const auto waiting_for = q.text(3);
  auto s = parse_run_state(state);
  if (!s)
    return bad_column("runs", "state", state, r.id);
  auto w = parse_wait_reason(waiting_for);
  if (!w)
    return bad_column("runs", "waiting_for", waiting_for, r.id);
  r.state = *s;
  r.waiting_for = *w;
  r.submitter = q.text(4);
  r.idempotency_key = q.text(5);
  r.node_id = q.text(6);
  r.created_at = q.i64(7);
  r.updated_at = q.i64(8);
  r.steps = q.i64(9);
  r.tokens = q.i64(10);
  r.budget.max_steps = q.i64(11);
  r.budget.max_tokens = q.i64(12);
  r.budget.deadline_us = q.i64(13);
  r.budget.max_result_bytes = q.i64(14);
  r.checkpoint = q.text(15);
  r.conclusion = q.text(16);
  r.error = q.text(17);
  r.labels = q.text(18);
  r.kind = q.text(19);
  r.parent = q.text(20);
  r.spec = q.text(21);
  r.budget.max_cost = q.f64(22);
  r.outcome = q.text(23);
  return r;
}

void bind_step(stmt_use& q, const step& s) {
  q.bind(1, s.run_id)
    .bind(2, s.n)
    .bind(3, to_string(s.kind))
    .bind(4, to_string(s.state))
    .bind(5, s.tool)
    .bind(6, s.args)
    .bind(7, s.idempotency_key)
    .bind(8, s.decision)
    .bind(9, s.result)
    .bind(10, s.error)
    .bind(11, s.result_truncated)
    .bind(12, s.started_at)
    .bind(13, s.finished_at)
    .bind(14, s.attempts)
    .bind(15, s.executed_at);
}

expected<step> read_step(const stmt_use& q) {
  step s;
  s.run_id = q.text(0);
  s.n = q.i64(1);
  const auto kind = q.text(2);
  const auto state = q.text(3);
  auto k = parse_step_kind(kind);
  if (!k)
    return bad_column("steps", "kind", kind, fmt::format("{}/{}", s.run_id, s.n));
  auto st = parse_step_state(state);
  if (!st)
    return bad_column("steps", "state", state, fmt::format("{}/{}", s.run_id, s.n));
  s.kind = *k;
  s.state = *st;
  s.tool = q.text(4);
  s.args = q.text(5);
  s.idempotency_key = q.text(6);
  s.decision = q.text(7);
  s.result = q.text(8);
  s.error = q.text(9);
  s.result_truncated = q.i64(10) != 0;
  s.started_at = q.i64(11);
  s.finished_at = q.i64(12);
  s.attempts = q.i64(13);
  s.executed_at = q.i64(14);
  return s;
}

void bind_event(stmt_use& q, const event& e, std::int64_t seq) {
  q.bind(1, seq)
    .bind(2, e.id)
    .bind(3, e.run_id)
    .bind(4, e.run_seq)
    .bind(5, e.kind)
    .bind(6, e.at)
    .bind(7, e.data);
}

event read_event(const stmt_use& q) {
  event e;
  e.seq = q.i64(0);
  e.id = q.text(1);
  e.run_id = q.text(2);
  e.run_seq = q.i64(3);
  e.kind = q.text(4);
  e.at = q.i64(5);
  e.data = q.text(6);
  return e;
}

} // namespace sreh::persistence::sqlite
