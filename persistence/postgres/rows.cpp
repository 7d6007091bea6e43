#include "persistence/postgres/rows.hpp"

#include <fmt/format.h>
#include <pqxx/field>

#include "persistence/store/approval_codec.hpp"

namespace sreh::persistence::pg {

std::string text(const pqxx::field& f) {
  return {f.c_str(), f.size()};
}

namespace {

std::string text(const pqxx::row& r, int col) {
  return pg::text(r[col]);
}

std::int64_t i64(const pqxx::row& r, int col) {
  return r[col].as<std::int64_t>();
}

sreh::error bad_column(std::string_view table, std::string_view column, std::string_view value,
                       std::string_view id) {
  return {errc::internal,
          fmt::format("postgres: {}.{}: unknown value '{}' in row {}", table, column, value, id)};
}

} // namespace

// -- array columns -------------------------------------------------------------------------------

std::string& array_columns::next() {
  auto& c = cols_[col_++];
  if (rows_ > 1)
    c += ',';
  return c;
}

array_columns& array_columns::text(std::string_view v) {
  auto& c = next();
  c.reserve(c.size() + v.size() + 2);
  c += '"';
  for (char ch : v) {
    if (ch == '"' || ch == '\\')
      c += '\\';
    c += ch;
  }
  c += '"';
  return *this;
}

array_columns& array_columns::integer(std::int64_t v) {
  fmt::format_to(std::back_inserter(next()), "{}", v);
  return *this;
}

array_columns& array_columns::number(double v) {
  fmt::format_to(std::back_inserter(next()), "{}", v); // the shortest text that reads back as v
  return *this;
}

const std::vector<std::string>& array_columns::finish() {
  for (auto& c : cols_)
    c += '}';
  return cols_;
}

// -- writes --------------------------------------------------------------------------------------

void add_run(array_columns& c, const run& r) {
  c.row()
    .text(r.id)
    .text(r.goal)
    .text(to_string(r.state))
    .text(to_string(r.waiting_for))
    .text(r.submitter)
    .text(r.idempotency_key)
    .text(r.node_id)
    .integer(r.created_at)
    .integer(r.updated_at)
    .integer(r.steps)
    .integer(r.tokens)
    .integer(r.budget.max_steps)
    .integer(r.budget.max_tokens)
    .integer(r.budget.deadline_us)
    .integer(r.budget.max_result_bytes)
    .text(r.checkpoint)
    .text(r.conclusion)
    .text(r.error)
    .text(r.labels)
    .text(r.kind)
    .text(r.parent)
    .text(r.spec)
    .number(r.budget.max_cost)
    .text(r.outcome);
}

void add_step(array_columns& c, const step& s) {
  c.row()
    .text(s.run_id)
    .integer(s.n)
    .text(to_string(s.kind))
    .text(to_string(s.state))
    .text(s.tool)
    .text(s.args)
    .text(s.idempotency_key)
    .text(s.decision)
    .text(s.result)
    .text(s.error)
    .boolean(s.result_truncated)
    .integer(s.started_at)
    .integer(s.finished_at)
    .integer(s.attempts)
    .integer(s.executed_at);
}

void add_approval(array_columns& c, const approval& a) {
  c.row()
    .text(a.id)
    .text(a.run_id)
    .integer(a.step_n)
    .text(to_string(a.kind))
    .text(to_string(a.state))
    .text(a.tool)
    .text(a.args)
    .text(a.rule_id)
    .text(a.reason)
    .integer(a.required)
    .text(strings_json(a.roles))
    .text(a.requester)
    .text(votes_json(a.votes))
    .integer(a.created_at)
    .integer(a.expires_at)
    .text(a.on_timeout)
    .text(strings_json(a.escalate_to))
    .boolean(a.escalated)
    .integer(a.decided_at)
    .integer(needed_rank(a.roles));
}

void add_event(array_columns& c, const event& e, std::int64_t seq, std::string_view prev_hash,
               std::string_view hash) {
  c.row()
    .integer(seq)
    .text(e.id)
    .text(e.run_id)
    .integer(e.run_seq)
    .text(e.kind)
    .integer(e.at)
    .text(e.data)
    .text(prev_hash)
    .text(hash);
}

// -- reads ---------------------------------------------------------------------------------------

expected<run> read_run(const pqxx::row& row) {
  run r;
  r.id = text(row, 0);
  r.goal = text(row, 1);
  const auto state = text(row, 2);
  const auto waiting_for = text(row, 3);
  auto s = parse_run_state(state);
  if (!s)
    return bad_column("runs", "state", state, r.id);
  auto w = parse_wait_reason(waiting_for);
  if (!w)
    return bad_column("runs", "waiting_for", waiting_for, r.id);
  r.state = *s;
  r.waiting_for = *w;
  r.submitter = text(row, 4);
  r.idempotency_key = text(row, 5);
  r.node_id = text(row, 6);
  r.created_at = i64(row, 7);
  r.updated_at = i64(row, 8);
  r.steps = i64(row, 9);
  r.tokens = i64(row, 10);
  r.budget.max_steps = i64(row, 11);
  r.budget.max_tokens = i64(row, 12);
  r.budget.deadline_us = i64(row, 13);
  r.budget.max_result_bytes = i64(row, 14);
  r.checkpoint = text(row, 15);
  r.conclusion = text(row, 16);
  r.error = text(row, 17);
  r.labels = text(row, 18);
  r.kind = text(row, 19);
  r.parent = text(row, 20);
  r.spec = text(row, 21);
  r.budget.max_cost = row[22].as<double>();
  r.outcome = text(row, 23);
  return r;
}

expected<step> read_step(const pqxx::row& row) {
  step s;
  s.run_id = text(row, 0);
  s.n = i64(row, 1);
  const auto kind = text(row, 2);
  const auto state = text(row, 3);
  auto k = parse_step_kind(kind);
  if (!k)
    return bad_column("steps", "kind", kind, fmt::format("{}/{}", s.run_id, s.n));
  auto st = parse_step_state(state);
  if (!st)
    return bad_column("steps", "state", state, fmt::format("{}/{}", s.run_id, s.n));
  s.kind = *k;
  s.state = *st;
  s.tool = text(row, 4);
  s.args = text(row, 5);
  s.idempotency_key = text(row, 6);
  s.decision = text(row, 7);
  s.result = text(row, 8);
  s.error = text(row, 9);
  s.result_truncated = row[10].as<bool>();
  s.started_at = i64(row, 11);
  s.finished_at = i64(row, 12);
  s.attempts = i64(row, 13);
  s.executed_at = i64(row, 14);
  return s;
}

event read_event(const pqxx::row& row) {
  event e;
  e.seq = i64(row, 0);
  e.id = text(row, 1);
  e.run_id = text(row, 2);
  e.run_seq = i64(row, 3);
  e.kind = text(row, 4);
  e.at = i64(row, 5);
  e.data = text(row, 6);
  return e;
}

expected<approval> read_approval(const pqxx::row& row) {
  approval a;
  a.id = text(row, 0);
  a.run_id = text(row, 1);
  a.step_n = i64(row, 2);
  const auto kind = text(row, 3);
  const auto state = text(row, 4);
  auto k = parse_approval_kind(kind);
  if (!k)
    return bad_column("approvals", "kind", kind, a.id);
  auto st = parse_approval_state(state);
  if (!st)
    return bad_column("approvals", "state", state, a.id);
  a.kind = *k;
  a.state = *st;
  a.tool = text(row, 5);
  a.args = text(row, 6);
  a.rule_id = text(row, 7);
  a.reason = text(row, 8);
  a.required = i64(row, 9);
  if (!read_strings(text(row, 10), a.roles))
    return bad_column("approvals", "roles", text(row, 10), a.id);
  a.requester = text(row, 11);
  if (!read_votes(text(row, 12), a.votes))
    return bad_column("approvals", "votes", text(row, 12), a.id);
  a.created_at = i64(row, 13);
  a.expires_at = i64(row, 14);
  a.on_timeout = text(row, 15);
  if (!read_strings(text(row, 16), a.escalate_to))
    return bad_column("approvals", "escalate_to", text(row, 16), a.id);
  a.escalated = row[17].as<bool>();
  a.decided_at = i64(row, 18);
  return a;
}

} // namespace sreh::persistence::pg
