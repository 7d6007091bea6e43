#include "actors/kernel/run/journal.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/base/json.hpp"
#include "core/base/json_object.hpp"
#include "core/model/fork_origin.hpp"

namespace sreh::actors {

namespace {

/// Step `n` of run `r`, of `kind` and in `state`, with nothing else set yet.
step new_step(const run& r, std::int64_t n, step_kind kind, step_state state) {
  step s;
  s.run_id = r.id;
  s.n = n;
  s.kind = kind;
  s.state = state;
  return s;
}

/// A short result for the event stream: full when small, else a marker (the
/// step has it all).
std::string result_for_event(const std::string& result) {
  if (result.empty())
    return "null";
  if (result.size() <= 2048)
    return result;
  return json::object("omitted", true, "bytes", result.size());
}

} // namespace

std::string cap_result(std::string result, std::int64_t max_bytes, bool& truncated) {
  truncated = false;
  if (static_cast<std::int64_t>(result.size()) <= max_bytes)
    return result;
  truncated = true;
  std::size_t cut = std::min<std::size_t>(1024, result.size());
  while (cut > 0 && (static_cast<unsigned char>(result[cut]) & 0xC0) == 0x80)
    --cut; // never split a UTF-8 sequence
  return json::object("truncated", true, "bytes", result.size(), "preview",
                      std::string_view{result}.substr(0, cut));
}

void run_journal::init(const runtime& rt, run initial, std::vector<step> journaled) {
  rt_ = &rt;
  r = std::move(initial);
  steps = std::move(journaled);
  facts_.clear();
  facts_.reserve(steps.size());
  conversation_steps_ = 0;
  for (const auto& s : steps) {
    facts_.push_back(read_facts(s));
    if (s.kind == step_kind::message || s.kind == step_kind::reply)
      ++conversation_steps_;
  }
  run_seq_ = run_seq_of_checkpoint(r.checkpoint);
  cost = cost_of_checkpoint(r.checkpoint);
}

persistence::write_batch run_journal::take_create_batch() {
  if (auto origin = fork_origin_of(r))
    emit("run.created", json::object("goal", r.goal, "submitter", r.submitter, "labels",
                                     json::raw_text{r.labels}, "kind", r.kind, "parent", nullptr,
                                     "forked_from", origin->run_id, "from_step", origin->step));
  else
    emit("run.created",
         json::object("goal", r.goal, "submitter", r.submitter, "labels", json::raw_text{r.labels},
                      "kind", r.kind, "parent", json::string_or_null(r.parent)));
  r.checkpoint = checkpoint_of(run_seq_, cost);
  persistence::write_batch b;
  b.create = r;
  b.steps = steps; // a fork starts with the recorded steps it copied (kernel_fork.cpp)
  b.events = std::move(events_);
  events_.clear();
  return b;
}

void run_journal::start() {
  r.state = run_state::running;
  emit("run.started", json::object("node", rt_->cfg.node_id));
}

void run_journal::emit(const char* kind, std::string data) {
  event e;
  e.id = rt_->ids.next("evt");
  e.run_id = r.id;
  e.run_seq = ++run_seq_;
  e.kind = kind;
  e.at = rt_->clock.now_us();
  e.data = std::move(data);
  events_.push_back(std::move(e));
}

std::string run_journal::budget_exhausted(timestamp_us now) const {
  // What people said to the run (message steps) is not the run's work: it does not count.
  const auto taken = static_cast<std::int64_t>(steps.size()) - conversation_steps_;
  if (taken >= r.budget.max_steps)
    return fmt::format("budget exhausted: {} steps taken, max_steps is {}", taken,
                       r.budget.max_steps);
  if (r.budget.deadline_us > 0 && now >= r.budget.deadline_us)
    return "budget exhausted: the run's deadline has passed";
  return {};
}

step& run_journal::step_at(std::int64_t n) {
  return steps.at(static_cast<std::size_t>(n - 1));
}

void run_journal::append(step s) {
  if (s.kind == step_kind::message || s.kind == step_kind::reply)
    ++conversation_steps_;
  facts_.push_back(read_facts(s));
  steps.push_back(std::move(s));
  r.steps = static_cast<std::int64_t>(steps.size());
  touch(r.steps);
}

void run_journal::touch(std::int64_t n) {
  if (std::find(dirty_.begin(), dirty_.end(), n) == dirty_.end())
    dirty_.push_back(n);
}

void run_journal::add_tool_intent(const decision& d, const std::string& policy) {
  auto s = new_step(r, next_step_n(), step_kind::tool, step_state::intent);
  s.tool = d.tool;
  s.args = d.args.empty() ? "{}" : d.args;
  s.idempotency_key =
    d.idempotency_key.empty() ? fmt::format("{}:{}", r.id, s.n) : d.idempotency_key;
  s.decision = json::object("thought", d.thought, "detail", json::raw_or(d.detail, "{}"), "policy",
                            json::raw_text{policy});
  s.started_at = rt_->clock.now_us();
  emit("step.intent",
       json::object("n", s.n, "kind", "tool", "tool", s.tool, "args", json::raw_text{s.args},
                    "thought", d.thought, "policy", json::raw_text{policy}));
  append(std::move(s));
}

void run_journal::add_conclusion(const decision& d) {
  auto s = new_step(r, next_step_n(), step_kind::conclude, step_state::succeeded);
  s.decision = json::object("thought", d.thought, "detail", json::raw_or(d.detail, "{}"));
  s.result = json::object("conclusion", d.conclusion);
  s.started_at = s.finished_at = rt_->clock.now_us();
  emit("step.outcome", json::object("n", s.n, "kind", "conclude", "state", "succeeded", "result",
                                    json::raw_text{s.result}));
  append(std::move(s));
}

void run_journal::emit_outcome(const step& s) {
  // The execution alone, and apart from it the wait before it (an approval's, a
  // lease's).
  auto began = s.executed_at > 0 ? s.executed_at : s.started_at;
  emit("step.outcome",
       json::object("n", s.n, "kind", to_string(s.kind), "tool", s.tool, "state",
                    to_string(s.state), "error", json::string_or_null(s.error), "result",
                    json::raw_text{result_for_event(s.result)}, "truncated", s.result_truncated,
                    "attempts", s.attempts, "duration_us", s.finished_at - began, "waited_us",
                    began - s.started_at));
}

void run_journal::record_outcome(std::int64_t n, bool ok, std::string result, std::string error) {
  auto& s = step_at(n);
  s.state = ok ? step_state::succeeded : step_state::failed;
  s.result = cap_result(std::move(result), r.budget.max_result_bytes, s.result_truncated);
  s.error = std::move(error);
  s.finished_at = rt_->clock.now_us();
  emit_outcome(s);
  touch(n);
}

void run_journal::record_cancelled(std::int64_t n, std::string why) {
  auto& s = step_at(n);
  s.state = step_state::cancelled;
  s.error = std::move(why);
  s.finished_at = rt_->clock.now_us();
  emit_outcome(s);
  touch(n);
}

namespace {

/// A new approval of step `n` of run `r` (its tool call), asked by the run's
/// submitter.
approval approval_of(const run& r, const step& s, std::int64_t n, approval_kind kind,
                     std::string id, timestamp_us now) {
  approval a;
  a.id = std::move(id);
  a.run_id = r.id;
  a.step_n = n;
  a.kind = kind;
  a.tool = s.tool;
  a.args = s.args;
  a.requester = r.submitter;
  a.created_at = now;
  return a;
}

} // namespace

std::string run_journal::mark_in_doubt(std::int64_t n) {
  auto& s = step_at(n);
  s.state = step_state::in_doubt;
  s.error = fmt::format("tool '{}' cannot tell whether call {} took effect before the crash",
                        s.tool, s.idempotency_key);
  s.finished_at = rt_->clock.now_us();
  emit_outcome(s);
  touch(n);
  auto a = approval_of(r, s, n, approval_kind::in_doubt, rt_->ids.next("apr"), rt_->clock.now_us());
  a.reason = s.error + ": did it happen?";
  a.roles = {"approver"};
  emit("approval.requested",
       json::object("approval", a.id, "kind", "in_doubt", "step", n, "tool", a.tool, "args",
                    json::raw_text{a.args}, "reason", a.reason));
  auto id = a.id;
  approvals_.push_back(std::move(a));
  r.state = run_state::waiting;
  r.waiting_for = wait_reason::approval;
  emit("run.waiting",
       json::object("for", "approval", "approval", id, "reason", "in_doubt", "step", n));
  return id;
}

std::string run_journal::request_approval(std::int64_t n, const policy::decision& d) {
  auto& s = step_at(n);
  auto a = approval_of(r, s, n, approval_kind::action, rt_->ids.next("apr"), rt_->clock.now_us());
  a.rule_id = d.rule_id;
  a.reason = d.reason;
  a.required = d.approval.approvers;
  a.roles = d.approval.roles;
  a.expires_at = d.approval.timeout_s > 0 ? a.created_at + d.approval.timeout_s * 1'000'000 : 0;
  a.on_timeout = d.approval.on_timeout;
  a.escalate_to = d.approval.escalate_to;
  char buf[32];
  emit(
    "approval.requested",
    json::object("approval", a.id, "kind", "action", "step", n, "tool", a.tool, "args",
                 json::raw_text{a.args}, "rule", a.rule_id, "reason", a.reason, "required",
                 a.required, "expires_at",
                 a.expires_at ? std::optional{format_rfc3339(a.expires_at, buf)} : std::nullopt));
  auto id = a.id;
  approvals_.push_back(std::move(a));
  r.state = run_state::waiting;
  r.waiting_for = wait_reason::approval;
  emit("run.waiting", json::object("for", "approval", "approval", id, "step", n));
  return id;
}

namespace {

std::string who_decided(const approval& a) {
  std::string out;
  for (auto& v : a.votes) {
    out += out.empty() ? "" : ", ";
    out += v.by + (v.comment.empty() ? "" : " (\"" + v.comment + "\")");
  }
  return out.empty() ? std::string{"nobody"} : out;
}

/// The result of a step a denied or expired approval kept from running: final,
/// never retried.
std::string not_executed_result(const approval& a) {
  return json::object("not_executed",
                      a.state == approval_state::approved ? "denied" : to_string(a.state),
                      "approval", a.id, "retryable", false);
}

} // namespace

bool run_journal::resume(const approval& a) {
  auto& s = step_at(a.step_n);
  r.state = run_state::running;
  r.waiting_for = wait_reason::none;
  emit("run.resumed", json::object("approval", a.id, "state", to_string(a.state)));
  bool yes = a.state == approval_state::approved;
  if (s.kind == step_kind::approval) { // a flow's approval step: the decision
                                       // is its outcome
    if (yes)
      record_outcome(s.n, true, json::object("approved_by", who_decided(a)), {});
    else
      record_outcome(s.n, false, not_executed_result(a),
                     a.state == approval_state::expired
                       ? fmt::format("approval {} expired undecided", a.id)
                       : fmt::format("denied by {}", who_decided(a)));
    return false;
  }
  if (a.kind == approval_kind::in_doubt) {
    if (yes) {
      record_outcome(s.n, true, json::object("confirmed_by", who_decided(a)), {});
      return false;
    }
    s.state = step_state::intent; // it did not happen: run it now
    s.error.clear();
    ++s.attempts;
    touch(s.n);
    return true;
  }
  if (yes)
    return true;
  if (a.state == approval_state::withdrawn) {
    record_outcome(s.n, false, not_executed_result(a),
                   fmt::format("not executed: withdrawn by a {}", a.votes.empty()
                                                                    ? std::string{"constraint"}
                                                                    : a.votes.back().comment));
    return false;
  }
  record_outcome(s.n, false, not_executed_result(a),
                 a.state == approval_state::expired
                   ? fmt::format("not executed: approval {} expired undecided", a.id)
                   : fmt::format("not executed: denied by {}", who_decided(a)));
  return false;
}

void run_journal::add_timer(std::int64_t for_step, timestamp_us until,
                            const std::string& description, std::string decision) {
  auto s = new_step(r, next_step_n(), step_kind::timer, step_state::intent);
  s.args = json::object("until_us", until, "for_step", for_step, "check", description);
  s.decision = std::move(decision);
  s.started_at = rt_->clock.now_us();
  char buf[32];
  emit("step.intent", json::object("n", s.n, "kind", "timer", "until", format_rfc3339(until, buf),
                                   "for_step", for_step));
  append(std::move(s));
  r.state = run_state::waiting;
  r.waiting_for = wait_reason::timer;
  emit("run.waiting", json::object("for", "timer", "until", format_rfc3339(until, buf)));
}

std::int64_t run_journal::timer_fired() {
  const auto& s = steps.back();
  auto for_step = facts(s).for_step;
  r.state = run_state::running;
  r.waiting_for = wait_reason::none;
  emit("run.resumed", json::object("for", "timer"));
  record_outcome(s.n, true, json::object("fired", true), {});
  return for_step;
}

void run_journal::add_recall(const std::string& tool, std::string args, std::string result,
                             const std::string& thought) {
  auto s = new_step(r, next_step_n(), step_kind::tool, step_state::succeeded);
  s.tool = tool;
  s.args = std::move(args);
  s.idempotency_key = fmt::format("{}:{}", r.id, s.n);
  s.decision = json::object("thought", thought, "recall", true);
  s.result = cap_result(std::move(result), r.budget.max_result_bytes, s.result_truncated);
  s.started_at = s.executed_at = s.finished_at = rt_->clock.now_us();
  emit("step.intent", json::object("n", s.n, "kind", "tool", "tool", s.tool, "args",
                                   json::raw_text{s.args}, "thought", thought, "recall", true));
  append(std::move(s));
  emit_outcome(steps.back());
}

void run_journal::add_observation(std::int64_t for_step, bool holds, const std::string& detail,
                                  const std::string& description) {
  auto s = new_step(r, next_step_n(), step_kind::observe, step_state::succeeded);
  s.tool = step_at(for_step).tool;
  s.args = json::object("for_step", for_step, "check", description);
  s.result = json::object("holds", holds, "observed", json::raw_or(detail, "{}"));
  s.started_at = s.finished_at = rt_->clock.now_us();
  emit("step.outcome",
       json::object("n", s.n, "kind", "observe", "for_step", for_step, "check", description,
                    "holds", holds, "observed", json::raw_or(detail, "{}")));
  append(std::move(s));
}

void run_journal::emit_flow_intent(const step& s) {
  emit("step.intent",
       json::object("n", s.n, "kind", to_string(s.kind), "args", json::raw_text{s.args}, "thought",
                    facts(s).thought, "decision", json::raw_text{s.decision}));
}

void run_journal::add_flow_intent(step_kind kind, std::string args, std::string decision) {
  auto s = new_step(r, next_step_n(), kind, step_state::intent);
  s.args = std::move(args);
  s.decision = std::move(decision);
  s.started_at = rt_->clock.now_us();
  append(std::move(s));
  emit_flow_intent(steps.back());
}

void run_journal::add_flow_record(step_kind kind, bool ok, std::string result, std::string error,
                                  std::string decision) {
  auto s = new_step(r, next_step_n(), kind, ok ? step_state::succeeded : step_state::failed);
  s.decision = std::move(decision);
  s.result = std::move(result);
  s.error = std::move(error);
  s.started_at = s.finished_at = rt_->clock.now_us();
  append(std::move(s));
  emit_flow_intent(steps.back());
  emit_outcome(steps.back());
}

void run_journal::wait_for_runs(const std::string& run_ids) {
  r.state = run_state::waiting;
  r.waiting_for = wait_reason::runs;
  emit("run.waiting",
       json::object("for", "runs", "step", steps.back().n, "runs", json::raw_text{run_ids}));
}

void run_journal::runs_joined(bool ok, std::string result, std::string error) {
  r.state = run_state::running;
  r.waiting_for = wait_reason::none;
  emit("run.resumed", json::object("for", "runs"));
  record_outcome(steps.back().n, ok, std::move(result), std::move(error));
}

void run_journal::end_run(run_state final_state, std::string message) {
  r.state = final_state;
  r.waiting_for = wait_reason::none;
  if (final_state == run_state::succeeded)
    r.conclusion = message;
  else
    r.error = message;
  const char* kind = final_state == run_state::succeeded   ? "run.succeeded"
                     : final_state == run_state::cancelled ? "run.cancelled"
                                                           : "run.failed";
  emit(kind, json::object("message", message, "steps", steps.size(), "outcome",
                          json::string_or_null(r.outcome)));
}

persistence::write_batch run_journal::take_batch(std::vector<std::int64_t>& outcomes) {
  persistence::write_batch b;
  outcomes.clear();
  r.updated_at = rt_->clock.now_us();
  r.checkpoint = checkpoint_of(run_seq_, cost);
  b.update = r;
  b.steps.reserve(dirty_.size());
  for (auto n : dirty_) {
    auto& s = step_at(n);
    if (s.state != step_state::intent)
      outcomes.push_back(n);
    b.steps.push_back(s);
  }
  last_steps_ = std::move(dirty_);
  dirty_.clear();
  last_events_ = events_; // small; the step rows are rebuilt from `steps` on a retry
  b.events = std::move(events_);
  events_.clear();
  last_approvals_ = approvals_;
  b.approvals = std::move(approvals_);
  approvals_.clear();
  last_taken_ = taken_;
  b.taken = std::move(taken_);
  taken_.clear();
  return b;
}

void run_journal::restore_last_batch() {
  for (auto n : last_steps_)
    touch(n);
  events_.insert(events_.begin(), last_events_.begin(), last_events_.end());
  approvals_.insert(approvals_.begin(), last_approvals_.begin(), last_approvals_.end());
  taken_.insert(taken_.begin(), last_taken_.begin(), last_taken_.end());
  last_approvals_.clear();
  last_taken_.clear();
  last_steps_.clear();
  last_events_.clear();
}

} // namespace sreh::actors
