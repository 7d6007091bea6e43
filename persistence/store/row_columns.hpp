#pragma once
// The columns of the runs, steps, events and approvals tables, in their schema order, written
// and read in one place for both SQL dialects. A dialect supplies the two ends:
//
// - a sink with `text(std::string_view)` (a value that outlives the statement: a field of the
//   row or a static name), `owned(std::string)` (a value made for the write), `integer`,
//   `number` and `boolean`, each taking the next column;
// - a source with `text()`, `integer()`, `number()` and `boolean()`, each reading the next
//   column of a selected row.
//
// A new field is added here, to the schema's migrations and to the dialects' column lists.

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "core/base/expected.hpp"
#include "core/model/approval.hpp"
#include "core/model/event.hpp"
#include "core/model/run.hpp"
#include "core/model/step.hpp"
#include "persistence/store/approval_codec.hpp"

// -- column lists --------------------------------------------------------------------------------

// The columns as SQL text, in the order of the writers and readers below; the upserts' SET
// clauses, which both dialects spell alike.
#define SREH_RUN_COLUMNS                                                                           \
  "id, goal, state, waiting_for, submitter, idempotency_key, node_id, created_at, updated_at, "    \
  "steps, tokens, max_steps, max_tokens, deadline_us, max_result_bytes, checkpoint, "              \
  "conclusion, error, labels, kind, parent, spec, max_cost, outcome, quality"
#define SREH_STEP_COLUMNS                                                                          \
  "run_id, n, kind, state, tool, args, idempotency_key, decision, result, error, "                 \
  "result_truncated, started_at, finished_at, attempts, executed_at"
#define SREH_STEP_UPSERT                                                                           \
  "ON CONFLICT (run_id, n) DO UPDATE SET kind = excluded.kind, state = excluded.state, "           \
  "tool = excluded.tool, args = excluded.args, idempotency_key = excluded.idempotency_key, "       \
  "decision = excluded.decision, result = excluded.result, error = excluded.error, "               \
  "result_truncated = excluded.result_truncated, started_at = excluded.started_at, "               \
  "finished_at = excluded.finished_at, attempts = excluded.attempts, "                             \
  "executed_at = excluded.executed_at"
#define SREH_EVENT_COLUMNS "seq, id, run_id, run_seq, kind, at, data"
#define SREH_APPROVAL_COLUMNS                                                                      \
  "id, run_id, step_n, kind, state, tool, args, rule_id, reason, required, roles, requester, "     \
  "votes, created_at, expires_at, on_timeout, escalate_to, escalated, decided_at"
#define SREH_APPROVAL_UPSERT                                                                       \
  "ON CONFLICT (id) DO UPDATE SET run_id = excluded.run_id, step_n = excluded.step_n, "            \
  "kind = excluded.kind, state = excluded.state, tool = excluded.tool, args = excluded.args, "     \
  "rule_id = excluded.rule_id, reason = excluded.reason, required = excluded.required, "           \
  "roles = excluded.roles, requester = excluded.requester, votes = excluded.votes, "               \
  "created_at = excluded.created_at, expires_at = excluded.expires_at, "                           \
  "on_timeout = excluded.on_timeout, escalate_to = excluded.escalate_to, "                         \
  "escalated = excluded.escalated, decided_at = excluded.decided_at"

namespace sreh::persistence::rows {

/// The `internal` error for a stored value the domain type does not know.
[[nodiscard]] inline sreh::error bad_column(std::string_view dialect, std::string_view table,
                                            std::string_view column, std::string_view value,
                                            std::string_view id) {
  return {errc::internal, fmt::format("{}: {}.{}: unknown value '{}' in row {}", dialect, table,
                                      column, value, id)};
}

// -- writes --------------------------------------------------------------------------------------

template <class Sink>
void write_run(Sink& out, const run& r) {
  out.text(r.id).text(r.goal).text(to_string(r.state)).text(to_string(r.waiting_for));
  out.text(r.submitter).text(r.idempotency_key).text(r.node_id);
  out.integer(r.created_at).integer(r.updated_at).integer(r.steps).integer(r.tokens);
  out.integer(r.budget.max_steps).integer(r.budget.max_tokens).integer(r.budget.deadline_us);
  out.integer(r.budget.max_result_bytes);
  out.text(r.checkpoint).text(r.conclusion).text(r.error).text(r.labels).text(r.kind);
  out.text(r.parent).text(r.spec).number(r.budget.max_cost).text(r.outcome);
  out.text(r.quality);
}
inline constexpr std::size_t run_column_count = 25;

template <class Sink>
void write_step(Sink& out, const step& s) {
  out.text(s.run_id).integer(s.n).text(to_string(s.kind)).text(to_string(s.state));
  out.text(s.tool).text(s.args).text(s.idempotency_key).text(s.decision).text(s.result);
  out.text(s.error).boolean(s.result_truncated);
  out.integer(s.started_at).integer(s.finished_at).integer(s.attempts).integer(s.executed_at);
}
inline constexpr std::size_t step_column_count = 15;

/// Writes `e` at `seq` without its audit hashes (prev_hash, hash follow in the table).
template <class Sink>
void write_event(Sink& out, const event& e, std::int64_t seq) {
  out.integer(seq).text(e.id).text(e.run_id).integer(e.run_seq).text(e.kind).integer(e.at);
  out.text(e.data);
}
inline constexpr std::size_t event_column_count = 9; // with prev_hash, hash

/// Writes `a` with roles, votes and escalate_to as JSON arrays (approval_codec.hpp).
template <class Sink>
void write_approval(Sink& out, const approval& a) {
  out.text(a.id).text(a.run_id).integer(a.step_n).text(to_string(a.kind));
  out.text(to_string(a.state)).text(a.tool).text(a.args).text(a.rule_id).text(a.reason);
  out.integer(a.required).owned(strings_json(a.roles)).text(a.requester);
  out.owned(votes_json(a.votes)).integer(a.created_at).integer(a.expires_at).text(a.on_timeout);
  out.owned(strings_json(a.escalate_to)).boolean(a.escalated).integer(a.decided_at);
}
inline constexpr std::size_t approval_column_count = 19;

// -- reads ---------------------------------------------------------------------------------------

/// Reads a row selected with the run columns; an unknown enum name is an `internal` error.
template <class Source>
expected<run> read_run(Source& in, std::string_view dialect) {
  run r;
  r.id = in.text();
  r.goal = in.text();
  const auto state = in.text();
  const auto waiting_for = in.text();
  auto s = parse_run_state(state);
  if (!s)
    return bad_column(dialect, "runs", "state", state, r.id);
  auto w = parse_wait_reason(waiting_for);
  if (!w)
    return bad_column(dialect, "runs", "waiting_for", waiting_for, r.id);
  r.state = *s;
  r.waiting_for = *w;
  r.submitter = in.text();
  r.idempotency_key = in.text();
  r.node_id = in.text();
  r.created_at = in.integer();
  r.updated_at = in.integer();
  r.steps = in.integer();
  r.tokens = in.integer();
  r.budget.max_steps = in.integer();
  r.budget.max_tokens = in.integer();
  r.budget.deadline_us = in.integer();
  r.budget.max_result_bytes = in.integer();
  r.checkpoint = in.text();
  r.conclusion = in.text();
  r.error = in.text();
  r.labels = in.text();
  r.kind = in.text();
  r.parent = in.text();
  r.spec = in.text();
  r.budget.max_cost = in.number();
  r.outcome = in.text();
  r.quality = in.text();
  return r;
}

/// Reads a row selected with the step columns; an unknown enum name is an `internal` error.
template <class Source>
expected<step> read_step(Source& in, std::string_view dialect) {
  step s;
  s.run_id = in.text();
  s.n = in.integer();
  const auto kind = in.text();
  const auto state = in.text();
  auto k = parse_step_kind(kind);
  if (!k)
    return bad_column(dialect, "steps", "kind", kind, fmt::format("{}/{}", s.run_id, s.n));
  auto st = parse_step_state(state);
  if (!st)
    return bad_column(dialect, "steps", "state", state, fmt::format("{}/{}", s.run_id, s.n));
  s.kind = *k;
  s.state = *st;
  s.tool = in.text();
  s.args = in.text();
  s.idempotency_key = in.text();
  s.decision = in.text();
  s.result = in.text();
  s.error = in.text();
  s.result_truncated = in.boolean();
  s.started_at = in.integer();
  s.finished_at = in.integer();
  s.attempts = in.integer();
  s.executed_at = in.integer();
  return s;
}

/// Reads a row selected with the event columns (seq .. data).
template <class Source>
event read_event(Source& in) {
  event e;
  e.seq = in.integer();
  e.id = in.text();
  e.run_id = in.text();
  e.run_seq = in.integer();
  e.kind = in.text();
  e.at = in.integer();
  e.data = in.text();
  return e;
}

/// Reads a row selected with the approval columns; an unknown enum name or bad JSON is an
/// `internal` error naming the row.
template <class Source>
expected<approval> read_approval(Source& in, std::string_view dialect) {
  approval a;
  a.id = in.text();
  a.run_id = in.text();
  a.step_n = in.integer();
  const auto kind = in.text();
  const auto state = in.text();
  auto k = parse_approval_kind(kind);
  if (!k)
    return bad_column(dialect, "approvals", "kind", kind, a.id);
  auto st = parse_approval_state(state);
  if (!st)
    return bad_column(dialect, "approvals", "state", state, a.id);
  a.kind = *k;
  a.state = *st;
  a.tool = in.text();
  a.args = in.text();
  a.rule_id = in.text();
  a.reason = in.text();
  a.required = in.integer();
  // The list columns, each parsed from its JSON text.
  auto list = [&](const char* column, auto& out, auto parse) -> sreh::error {
    const auto text = in.text();
    if (!parse(text, out))
      return bad_column(dialect, "approvals", column, text, a.id);
    return {};
  };
  auto strings = [](std::string_view t, std::vector<std::string>& o) { return read_strings(t, o); };
  auto votes = [](std::string_view t, std::vector<approval_vote>& o) { return read_votes(t, o); };
  if (auto err = list("roles", a.roles, strings))
    return err;
  a.requester = in.text();
  if (auto err = list("votes", a.votes, votes))
    return err;
  a.created_at = in.integer();
  a.expires_at = in.integer();
  a.on_timeout = in.text();
  if (auto err = list("escalate_to", a.escalate_to, strings))
    return err;
  a.escalated = in.boolean();
  a.decided_at = in.integer();
  return a;
}

} // namespace sreh::persistence::rows
