#include <fmt/format.h>

#include <functional>
#include <optional>
#include <stdexcept>
#include <stop_token>

#include "actors/kernel/run/actor_impl.hpp"
#include "actors/kernel/run/journal.hpp"
#include "actors/policy/policy_check.hpp"
#include "actors/runtime/supervisor.hpp"
#include "core/base/failpoint.hpp"
#include "core/base/fault.hpp"
#include "core/base/json.hpp"
#include "core/base/json_object.hpp"
#include "core/model/outcome.hpp"
#include "core/quality/quality.hpp"

namespace sreh::actors {

namespace run_impl {

void submit_commit(self_ptr self, persistence::write_batch batch) {
  auto& st = self->state;
  auto token = ++st.commits;
  st.awaited = token;
  auto handle = run_actor{self};
  st.rt->writer.submit(std::move(batch), [handle, token](persistence::commit_result r) {
    caf::anon_send(handle, committed_atom::value, token, std::move(r.err),
                   std::move(r.existing_run_id));
  });
}

void commit(self_ptr self, after_commit next) {
  auto& st = self->state;
  st.next = next;
  st.commit_failures = 0;
  submit_commit(self, st.journal.take_batch(st.in_flight_outcomes));
}

void finish(self_ptr self, run_state final_state, std::string message) {
  auto& j = self->state.journal;
  const auto mutating = self->state.rt->tools.mutating();
  j.r.outcome = outcome::of_run(j.r.kind, final_state, j.steps, mutating);
  j.end_run(final_state, std::move(message));
  if (j.r.kind == "goal") // a flow run's steps are its flow's, not reasoning to score
    j.r.quality = quality::to_json(quality::of_run(j.r, j.steps, mutating));
  commit(self, after_commit::finish);
}

void fail(self_ptr self, std::string why) {
  self->state.rt->log->warn("run {} failed: {}", self->state.journal.r.id, why);
  finish(self, run_state::failed, std::move(why));
}

/// The outcome of the current tool step is known: journal it (committed with the next step).
void on_tool_done(self_ptr self, std::int64_t n, bool ok, std::string result, std::string err) {
  auto& st = self->state;
  if (st.rt->shutdown.stop_requested())
    return; // interrupted by the node's shutdown: the step stays an intent, recovery resumes it
  failpoint("after_effect", n);
  if (n == st.timed_out) {
    ok = false;
    err = fmt::format("timed out after {} s{}", st.journal.facts(n).timeout_ms() / 1000,
                      err.empty() ? "" : " (" + err + ")");
  }
  st.journal.record_outcome(n, ok, std::move(result), std::move(err));
  st.rt->counters.steps.fetch_add(1, std::memory_order_relaxed);
  if (auto* m = st.rt->metrics.step_seconds) {
    const auto& s = st.journal.steps.at(static_cast<std::size_t>(n - 1)); // n is 1-based
    auto began = s.executed_at > 0 ? s.executed_at : s.started_at;
    m->with({s.tool}).observe(static_cast<double>(s.finished_at - began) / 1e6);
  }
  if (ok)
    return after_success(self, n);
  advance(self);
}

void execute(self_ptr self);

/// In a cluster this node starts an effect only while its lease holds (runtime.hpp:
/// lease_guard): once it lapses (the store has not answered its heartbeats), a survivor may
/// claim the run and reconcile this very step, and the effect would happen twice. The step
/// waits. When heartbeats renew the lease, the run's owner is read again: still this node, the
/// step executes; claimed meanwhile, this copy stops without writing (the owner drives it).
void wait_for_lease(self_ptr self) {
  auto& st = self->state;
  if (!st.lease_waiting) {
    st.lease_waiting = true;
    st.rt->log->warn("run {} step {}: not executing while this node's lease has lapsed (the "
                     "store has not answered its heartbeats); waiting",
                     st.journal.r.id, st.journal.steps.back().n);
  }
  auto token = st.calls.add([self] {
    auto& st = self->state;
    if (!st.rt->lease.holds() && !st.cancel.stop_requested())
      return wait_for_lease(self);
    read_store(
      run_actor{self}, st.calls, st.rt->store, st.rt->store_pool,
      [id = st.journal.r.id](persistence::run_store& s) { return s.get_run(id); },
      [self](expected<std::optional<run>> r) {
        auto& st = self->state;
        if (!r) // the store is still away
          return wait_for_lease(self);
        const auto& id = st.journal.r.id;
        if (*r && (*r)->node_id == st.rt->cfg.node_id) {
          st.lease_waiting = false;
          st.rt->log->info("run {}: this node's lease holds again; the step goes on", id);
          return execute(self);
        }
        st.rt->log->warn("run {}: claimed by node '{}' while this node's lease had "
                         "lapsed; stopping this copy without executing the step",
                         id, *r ? (*r)->node_id : std::string{"(gone)"});
        release_run_actions(*st.rt, id);
        self->quit();
      });
  });
  self->delayed_send(self, std::chrono::milliseconds(100), called_atom::value, token);
}

void execute(self_ptr self) {
  auto& st = self->state;
  auto& s = st.journal.steps.back();
  if (!st.cancel.stop_requested() && !st.rt->lease.holds())
    return wait_for_lease(self);
  if (st.cancel.stop_requested()) {
    st.journal.record_cancelled(s.n, "cancelled before execution by " + st.cancelled_by);
    finish(self, run_state::cancelled, "cancelled by " + st.cancelled_by);
    return;
  }
  auto t = st.rt->tools.find(s.tool);
  if (!t) {
    on_tool_done(self, s.n, false, "{}", fmt::format("unknown tool '{}'", s.tool));
    return;
  }
  auto args = t->parse_args(s.args); // parsed once: the tool reads them from the call
  if (!args) {
    on_tool_done(self, s.n, false, "{}",
                 fmt::format("invalid arguments for '{}': {}", s.tool, args.error().message));
    return;
  }
  // The call stops when the run is cancelled or, for a flow step with a timeout, when it is up.
  st.step_link.reset();
  st.step_stop = std::stop_source{};
  auto* step_stop = &st.step_stop;
  st.step_link.emplace(st.cancel.get_token(),
                       std::function<void()>{[step_stop] { step_stop->request_stop(); }});
  const auto& facts = st.journal.facts(s);
  if (auto ms = facts.timeout_ms(); ms > 0)
    self->delayed_send(self, std::chrono::milliseconds(ms), step_timeout_atom::value, s.n);
  tool_call call{st.journal.r.id, s.args, s.idempotency_key, st.step_stop.get_token(),
                 std::move(*args)};
  s.executed_at = st.rt->clock.now_us(); // journaled with the outcome: the wait ends here
  auto undoes = facts.compensates;
  if (undoes > 0) // the original call: its arguments and idempotency key
    call.idempotency_key =
      st.journal.steps.at(static_cast<std::size_t>(undoes - 1)).idempotency_key;
  if (undoes > 0 && !t->blocking()) {
    auto res = t->compensate(call);
    on_tool_done(self, s.n, res.ok, std::move(res.result), std::move(res.error));
    return;
  }
  if (!t->blocking()) {
    auto res = t->execute(call);
    on_tool_done(self, s.n, res.ok, std::move(res.result), std::move(res.error));
    return;
  }
  auto handle = run_actor{self};
  auto n = s.n;
  bool undo = undoes > 0;
  st.rt->pool.post([handle, t, call = std::move(call), n, undo] {
    tool_result res;
    try {
      res = undo ? t->compensate(call) : t->execute(call);
    } catch (const std::exception& e) {
      res = tool_result::failure(fmt::format("tool '{}' threw: {}", t->name(), e.what()));
    }
    caf::anon_send(handle, tool_done_atom::value, n, res.ok, std::move(res.result),
                   std::move(res.error));
  });
}

/// Journals the intent of a tool call with the policy's decision on it: allowed → execute after
/// the commit; denied → the step fails at once; needs approval → the run parks.
void journal_decision(self_ptr self, const decision& d, const policy::decision& pd) {
  auto& st = self->state;
  auto& j = st.journal;
  j.add_tool_intent(d, policy_json(pd, policy_of(st)));
  auto n = j.steps.back().n;
  switch (pd.effect) {
  case policy::verdict::allow:
    return commit(self, after_commit::execute);
  case policy::verdict::deny:
    j.record_outcome(n, false, json::object("not_executed", "policy", "retryable", false),
                     fmt::format("not executed: denied by policy ({})", pd.reason));
    return commit(self, after_commit::advance);
  case policy::verdict::require_approval:
    st.parked_on = j.request_approval(n, pd);
    return commit(self, after_commit::park);
  }
}

/// Asks policy about a tool call and journals the decision. A check that counts rate limits
/// reads the store first, on the store pool; the run waits for it (nothing else it does can
/// interleave: no commit is in flight while it proposes).
void propose(self_ptr self, const decision& d) {
  auto& st = self->state;
  auto& j = st.journal;
  if (!st.own_policy_error.empty())
    return fail(self, st.own_policy_error);
  auto check = prepare_policy_check(*st.rt, policy_of(st), j.r, d.tool, d.args, j.next_step_n());
  if (!check.history_since)
    return journal_decision(self, d, decide_policy(*st.rt, check, std::vector<step>{}));
  call_on(
    self, st.rt->store_pool,
    [rt = st.rt, since = *check.history_since] { return read_rate_history(rt->store, since); },
    [self, d, check](expected<std::vector<step>> history) mutable {
      journal_decision(self, d, decide_policy(*self->state.rt, check, history));
    });
}

/// Asks the model for the next step and journals its intent (or the conclusion).
void advance(self_ptr self) {
  if (fault("run.step"))
    throw std::runtime_error("fault injected at run.step");
  auto& st = self->state;
  auto& j = st.journal;
  if (st.cancel.stop_requested())
    return finish(self, run_state::cancelled, "cancelled by " + st.cancelled_by);
  if (auto why = j.budget_exhausted(st.rt->clock.now_us()); !why.empty())
    return fail(self, why);
  if (wants_recall(self)) // a goal run's first step
    return recall(self);
  if (const auto& recorded = st.rt->replay.messages; recorded && st.inbox.empty())
    if (auto ms = recorded(j.next_step_n()); !ms.empty()) { // a replay: as the recording did
      for (auto& m : ms)
        m.run_id = j.r.id;
      on_messages(self, std::move(ms));
    }
  if (!st.inbox.empty())
    return take_messages(self);
  if (st.pause)
    return hold(self);
  if (j.r.kind == "flow")
    return advance_flow(self);
  if (!st.provider_error.empty())
    return fail(self, st.provider_error);
  auto& provider = provider_of(st);
  if (auto* llm = provider.as_llm())
    return reason(self, *llm); // a language model: durable reason steps (run/reason.cpp)
  decision d;
  try {
    d = provider.decide(run_context{j.r, j.steps, st.rt->tools, &st.model_memory});
  } catch (const std::exception& e) {
    return fail(self, fmt::format("model provider '{}' failed: {}", provider.name(), e.what()));
  }
  j.r.tokens += d.tokens;
  if (j.r.tokens > j.r.budget.max_tokens)
    return fail(self, fmt::format("budget exhausted: {} tokens used, max_tokens is {}", j.r.tokens,
                                  j.r.budget.max_tokens));
  switch (d.kind) {
  case decision::call_tool:
    if (d.not_before_us > st.rt->clock.now_us()) {
      // Wait durably, then decide again: the provider asks for the call once its time has come.
      j.add_timer(0, d.not_before_us, d.thought);
      return commit(self, after_commit::park_timer);
    }
    return propose(self, d);
  case decision::conclude:
    j.add_conclusion(d);
    return finish(self, run_state::succeeded, d.conclusion);
  case decision::give_up:
    return fail(self, d.conclusion.empty() ? std::string{"the model gave up"} : d.conclusion);
  }
}

/// The run's row and its run.created event, committed before the submitter hears of the run.
void create(self_ptr self) {
  auto& st = self->state;
  st.creator = self->make_response_promise<kernel_reply>();
  if (fault("run.create"))
    throw std::runtime_error("fault injected at run.create");
  st.in_flight_outcomes.clear();
  st.next = after_commit::created;
  auto b = st.journal.take_create_batch();
  // A new run's inbox holds only what was said to it before it began (goal_request.opening,
  // handed over by the kernel when it spawned this actor): its first messages, committed with
  // it and taken at its first decision.
  for (const auto& m : st.inbox) {
    b.messages.push_back(m);
    b.events.push_back(message_event(*st.rt, m));
  }
  submit_commit(self, std::move(b));
}

void on_created(self_ptr self) {
  auto& st = self->state;
  kernel_reply rep;
  if (!st.existing_run_id.empty()) {
    // A retried submission: the key already names a run. This actor never became a run.
    rep.run_id = st.existing_run_id;
    rep.created = false;
    st.creator.deliver(rep);
    for (auto& p : st.cancel_waiters)
      p.deliver(reply_error(errc::conflict, "the run was not created (idempotency key reused)"));
    st.cancel_waiters.clear();
    return self->quit();
  }
  st.rt->counters.started.fetch_add(1, std::memory_order_relaxed);
  rep.run_id = st.journal.r.id;
  rep.created = true;
  rep.state = st.journal.r.state;
  st.creator.deliver(rep);
  st.journal.start();
  advance(self);
}

/// The run has parked (the kernel was told): stops this actor. A cancellation that came while
/// the parking commit was in flight goes to the kernel, after the parking: it cancels the run
/// parked.
void park_quit(self_ptr self) {
  auto& st = self->state;
  for (auto& p : st.cancel_waiters)
    p.delegate(st.kernel, cancel_atom::value, st.journal.r.id, st.cancelled_by);
  st.cancel_waiters.clear();
  self->quit();
}

void on_committed(self_ptr self, std::uint64_t token, sreh::error err, std::string existing) {
  auto& st = self->state;
  if (token != st.awaited)
    return;
  auto& msg = err.message;
  if (err && st.next == after_commit::created) {
    // Tell the submitter now rather than keep it waiting on a store that is away.
    st.creator.deliver(reply_error(err.code, std::move(msg)));
    return self->quit();
  }
  if (err.code == errc::conflict) {
    // A survivor claimed the run while this node's lease had expired: it is the owner now.
    // Stop this copy without writing anything (the survivor resumes from the checkpoint).
    st.rt->log->warn("run {}: stopping this node's copy: {}", st.journal.r.id, msg);
    release_run_actions(*st.rt, st.journal.r.id);
    return self->quit();
  }
  if (err) {
    // Nothing of the transaction was applied: resubmit the same batch after a backoff.
    auto delay = std::chrono::milliseconds(std::min(5000, 50 << std::min(st.commit_failures, 7)));
    ++st.commit_failures;
    st.rt->commit_errors.log(*st.rt->log, spdlog::level::err,
                             "run {}: commit failed ({}), retrying in {} ms", st.journal.r.id, msg,
                             delay.count());
    self->delayed_send(self, delay, retry_atom::value, token);
    return;
  }
  st.awaited = 0;
  st.existing_run_id = std::move(existing);
  for (auto n : st.in_flight_outcomes) {
    const auto& s = st.journal.steps.at(static_cast<std::size_t>(n - 1)); // n is 1-based
    release_action(*st.rt, st.journal.r.id, n, s.state == step_state::succeeded);
    failpoint("after_outcome", n);
  }
  switch (std::exchange(st.next, after_commit::nothing)) {
  case after_commit::created:
    return on_created(self);
  case after_commit::execute:
    failpoint("after_intent", st.journal.steps.back().n);
    return execute(self);
  case after_commit::start_runs:
    return start_runs(self);
  case after_commit::park_runs:
    self->send(st.kernel, await_atom::value, st.journal.r.id);
    return park_quit(self);
  case after_commit::finish: {
    st.rt->counters.finished.fetch_add(1, std::memory_order_relaxed);
    if (!st.journal.r.parent.empty()) // the flow run that started it may go on
      self->send(st.kernel, ended_atom::value, st.journal.r.parent);
    if (auto* m = st.rt->metrics.runs_finished)
      m->with({to_string(st.journal.r.state)}).inc();
    if (st.rt->run_ended && !st.journal.steps.empty())
      st.rt->run_ended(st.journal.r.id, st.journal.r.kind);
    kernel_reply rep;
    rep.run_id = st.journal.r.id;
    rep.state = st.journal.r.state;
    for (auto& p : st.cancel_waiters)
      p.deliver(rep);
    st.cancel_waiters.clear();
    return self->quit();
  }
  case after_commit::advance:
    return advance(self);
  case after_commit::park_timer: {
    auto at = st.journal.facts(st.journal.steps.back()).until;
    self->send(st.kernel, parked_atom::value, st.journal.r.id, std::string{}, at);
    return park_quit(self);
  }
  case after_commit::park: {
    // Passivation: the state is in the store; the kernel keeps the approval's timer and
    // respawns this run when the approval settles.
    self->send(st.kernel, parked_atom::value, st.journal.r.id, st.parked_on, std::int64_t{0});
    return park_quit(self);
  }
  case after_commit::nothing:
    return;
  }
}

/// Woken with the settled approval of the step the run parked on.
void resume(self_ptr self, const approval& a) {
  auto& st = self->state;
  if (st.journal.steps.empty() || st.journal.steps.back().n != a.step_n) {
    st.rt->log->error("run {}: cannot resume from approval {} (step {})", st.journal.r.id, a.id,
                      a.step_n);
    return self->quit();
  }
  bool run_step = st.journal.resume(a);
  // The run is durably running again before its step executes, so a crash in between is
  // recovered as an intent without outcome (reconciled), never executed twice.
  commit(self, run_step ? after_commit::execute : after_commit::advance);
}

run_actor::behavior_type run_behavior(self_ptr self, kernel_impl_actor kernel, runtime_ptr rt,
                                      run r, std::vector<step> steps) {
  self->state.rt = std::move(rt);
  self->state.kernel = std::move(kernel);
  // A bug's exception ends the actor with its message; the kernel recovers the run from the store.
  self->set_exception_handler(exit_with_message);
  auto* source = &self->state.cancel;
  self->state.on_shutdown.emplace(self->state.rt->shutdown.get_token(),
                                  std::function<void()>{[source] { source->request_stop(); }});
  self->state.journal.init(*self->state.rt, std::move(r), std::move(steps));
  load_run_versions(self->state);
  refresh_steering(self->state);
  return {
    [=](create_atom) -> caf::result<kernel_reply> {
      create(self);
      return self->state.creator;
    },
    [=](recover_atom) { recover(self); },
    [=](cancel_atom, const std::string&, const std::string& by) {
      auto& st = self->state;
      auto rp = self->make_response_promise<kernel_reply>();
      st.cancel_waiters.push_back(rp);
      if (!st.cancel.stop_requested()) {
        st.cancelled_by = by;
        st.cancel.request_stop(); // the in-flight tool sees it through its stop_token
      }
      wake(self); // a paused run ends now
      return rp;
    },
    [=](committed_atom, std::uint64_t token, sreh::error& err, std::string& existing) {
      on_committed(self, token, std::move(err), std::move(existing));
    },
    [=](retry_atom, std::uint64_t token) {
      if (token != self->state.awaited)
        return;
      // Nothing of the failed transaction was applied: rebuild the same batch and resubmit.
      self->state.journal.restore_last_batch();
      submit_commit(self, self->state.journal.take_batch(self->state.in_flight_outcomes));
    },
    [=](tool_done_atom, std::int64_t n, bool ok, std::string& result, std::string& err) {
      on_tool_done(self, n, ok, std::move(result), std::move(err));
    },
    [=](reconciled_atom, std::int64_t n, reconcile_result::status status, std::string& result) {
      on_reconciled(self, n, status, std::move(result));
    },
    [=](resume_atom, const approval& a) { resume(self, a); },
    [=](timer_atom) { on_timer_fired(self); },
    [=](called_atom, std::uint64_t token) { self->state.calls.complete(token); },
    [=](say_atom, std::vector<conversation::message>& ms) { on_messages(self, std::move(ms)); },
    [=](runs_atom, const std::vector<flows::child_end>& ends, bool timed_out) {
      on_runs_joined(self, ends, timed_out);
    },
    [=](step_timeout_atom, std::int64_t n) {
      auto& st = self->state;
      if (st.journal.steps.empty() || st.journal.steps.back().n != n ||
          st.journal.steps.back().state != step_state::intent)
        return; // it ended in time
      st.rt->log->warn("run {} step {}: timed out; stopping the tool", st.journal.r.id, n);
      st.timed_out = n;
      st.step_stop.request_stop();
    },
  };
}

} // namespace run_impl

run_actor spawn_run(caf::local_actor* parent, kernel_impl_actor kernel, runtime_ptr rt, run r,
                    std::vector<step> steps) {
  return parent->spawn<caf::linked>(run_impl::run_behavior, std::move(kernel), std::move(rt),
                                    std::move(r), std::move(steps));
}

} // namespace sreh::actors
