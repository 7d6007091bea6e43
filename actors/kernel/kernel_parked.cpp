// Parked runs: a run waiting for an approval has no actor; its approval is a durable record
// plus a deadline in the kernel's timer index. Votes, timeouts, escalation and cancellation are
// written by the kernel (one operation at a time per run), and a settled approval respawns the
// run. Every store read runs on the store pool and continues here (read_store).

#include <fmt/format.h>

#include "actors/kernel/kernel_state.hpp"
#include "core/base/json.hpp"
#include "core/base/json_object.hpp"

namespace sreh::actors {

void arm_timer(kernel_self self) {
  auto& st = self->state;
  if (st.timers.empty())
    return;
  auto earliest = st.timers.begin()->first;
  if (st.armed != 0 && st.armed <= earliest)
    return;
  st.armed = earliest;
  auto wait = std::max<timestamp_us>(0, earliest - st.rt->clock.now_us());
  self->delayed_send(self, std::chrono::microseconds(wait), timer_atom::value);
}

namespace {

void add_timer(kernel_self self, const approval& a) {
  if (a.state != approval_state::pending || a.expires_at == 0)
    return;
  self->state.timers.emplace(a.expires_at, a.id);
  arm_timer(self);
}

void drop_timer(kernel_self self, const approval& a) {
  auto& t = self->state.timers;
  for (auto [i, end] = t.equal_range(a.expires_at); i != end; ++i)
    if (i->second == a.id) {
      t.erase(i);
      return;
    }
}

/// Respawns a parked run with its settled approval and its steps.
void resume_with(kernel_self self, run r, const approval& a, std::vector<step> steps) {
  auto& st = self->state;
  if (st.runs.count(r.id) != 0)
    return; // already awake
  st.rt->counters.parked.fetch_sub(1, std::memory_order_relaxed);
  self->send(activate(self, std::move(r), std::move(steps)), resume_atom::value, a);
}

/// Respawns a parked run with its settled approval once its steps are read; `then` runs after,
/// in the kernel (the caller's operation on the run ends there).
void resume_run(kernel_self self, run r, approval a, std::function<void()> then) {
  if (self->state.runs.count(r.id) != 0)
    return then(); // already awake
  auto id = r.id;
  read_store(
    self, [id](persistence::run_store& s) { return s.get_steps(id); },
    [self, r = std::move(r), a = std::move(a),
     then = std::move(then)](expected<std::vector<step>> steps) mutable {
      if (!steps)
        self->state.rt->log->error("cannot resume run {}: {}", r.id, steps.error().message);
      else
        resume_with(self, std::move(r), a, std::move(*steps));
      then();
    });
}

struct parked_view {
  run r;
  approval a;
};

/// In a cluster only the owner writes a run (the facade routes requests to it; this catches a
/// request that raced a change of owner).
sreh::error owned_here(const runtime& rt, const run& r) {
  if (!rt.cfg.cluster.topo || r.node_id == rt.cfg.node_id)
    return {};
  return {errc::unavailable,
          fmt::format("run {} is owned by node '{}' now; retry", r.id, r.node_id)};
}

/// Loads a run and its approval for a kernel write; an error when either is missing. Blocking:
/// on the store pool.
expected<parked_view> load(const runtime& rt, const std::string& approval_id) {
  auto a = rt.store.get_approval(approval_id);
  if (!a)
    return a.error();
  if (!a->has_value())
    return sreh::error{errc::not_found, fmt::format("no approval with id '{}'", approval_id)};
  auto r = rt.store.get_run((*a)->run_id);
  if (!r)
    return r.error();
  if (!r->has_value())
    return sreh::error{
      errc::internal, fmt::format("approval {} names a missing run {}", approval_id, (*a)->run_id)};
  if (auto err = owned_here(rt, **r))
    return err;
  return parked_view{std::move(**r), std::move(**a)};
}

/// `load` on the store pool, then `then(expected<parked_view>)` in the kernel.
template <class Then>
void load_parked(kernel_self self, const std::string& approval_id, Then then) {
  read_store(
    self,
    [rt = self->state.rt, approval_id](persistence::store&) { return load(*rt, approval_id); },
    std::move(then));
}

kernel_reply approval_reply(const approval& a) {
  kernel_reply rep;
  rep.run_id = a.run_id;
  rep.decided = a;
  return rep;
}

std::string vote_data(const approval& a, const approval_vote& v) {
  std::int64_t yes = 0;
  for (auto& x : a.votes)
    yes += x.approve ? 1 : 0;
  return json::object("approval", a.id, "by", v.by, "role", v.role, "approve", v.approve, "comment",
                      v.comment, "approvals", yes, "required", a.required, "state",
                      to_string(a.state));
}

void apply_decision(kernel_self self, const std::string& approval_id, const approval_vote& vote,
                    caf::typed_response_promise<kernel_reply> rp, const std::string& run_id) {
  load_parked(self, approval_id, [self, vote, rp, run_id](expected<parked_view> v) mutable {
    auto& rt = *self->state.rt;
    if (!v) {
      rp.deliver(reply_error(v.error().code, v.error().message));
      return release_run(self, run_id);
    }
    auto before = v->a.votes.size();
    if (auto err = apply_vote(v->a, vote)) {
      rp.deliver(reply_error(err.code, err.message));
      return release_run(self, run_id);
    }
    if (v->a.votes.size() == before) { // this identity had voted already: the first vote stands
      rp.deliver(approval_reply(v->a));
      return release_run(self, run_id);
    }
    persistence::write_batch b;
    b.events.push_back(parked_event(rt, v->r, "approval.voted", vote_data(v->a, vote)));
    bool settled = v->a.state != approval_state::pending;
    if (settled)
      b.events.push_back(
        parked_event(rt, v->r, "approval.decided",
                     json::object("approval", v->a.id, "state", to_string(v->a.state))));
    b.approvals.push_back(v->a);
    b.update = v->r;
    kernel_commit(
      self, std::move(b), [self, rp, view = *v, settled, run_id](const sreh::error& err) mutable {
        if (err) {
          rp.deliver(reply_error(err.code, err.message));
          return release_run(self, run_id);
        }
        rp.deliver(approval_reply(view.a));
        if (!settled)
          return release_run(self, run_id);
        drop_timer(self, view.a);
        self->state.rt->counters.pending_approvals.fetch_sub(1, std::memory_order_relaxed);
        resume_run(self, std::move(view.r), std::move(view.a),
                   [self, run_id] { release_run(self, run_id); });
      });
  });
}

/// A deadline passed: escalate once if the rule says so, else the approval expires.
void expire(kernel_self self, const std::string& approval_id, const std::string& run_id) {
  load_parked(self, approval_id, [self, run_id](expected<parked_view> v) {
    auto& rt = *self->state.rt;
    auto now = rt.clock.now_us();
    if (!v || v->a.state != approval_state::pending || v->a.expires_at > now) {
      if (v && v->a.state == approval_state::pending)
        add_timer(self, v->a); // escalated meanwhile: a later deadline
      return release_run(self, run_id);
    }
    persistence::write_batch b;
    bool escalate = v->a.on_timeout == "escalate" && !v->a.escalated && !v->a.escalate_to.empty();
    if (escalate) {
      auto timeout = v->a.expires_at - v->a.created_at;
      v->a.escalated = true;
      v->a.roles = v->a.escalate_to;
      v->a.expires_at = now + timeout;
      char buf[32];
      b.events.push_back(
        parked_event(rt, v->r, "approval.escalated",
                     json::object("approval", v->a.id, "roles", v->a.roles, "expires_at",
                                  format_rfc3339(v->a.expires_at, buf))));
    } else {
      v->a.state = approval_state::expired;
      v->a.decided_at = now;
      b.events.push_back(
        parked_event(rt, v->r, "approval.expired", json::object("approval", v->a.id)));
    }
    b.approvals.push_back(v->a);
    b.update = v->r;
    kernel_commit(self, std::move(b), [self, view = *v, escalate, run_id](const sreh::error& err) {
      if (err) {
        self->state.rt->log->error("approval {}: cannot record its timeout: {}", view.a.id,
                                   err.message);
        self->state.timers.emplace(view.a.expires_at, view.a.id); // try again later
      } else if (escalate) {
        add_timer(self, view.a);
      } else {
        self->state.rt->counters.pending_approvals.fetch_sub(1, std::memory_order_relaxed);
        return resume_run(self, view.r, view.a, [self, run_id] { release_run(self, run_id); });
      }
      release_run(self, run_id);
    });
  });
}

/// What a parked run's approval says when its actor has just stopped.
struct parked_on_view {
  std::optional<approval> a; // none: it cannot be read
  std::optional<run> r;      // the run, when the approval is settled already
  sreh::error err;           // reading the run's steps failed
  std::vector<step> steps;
};

/// A run's actor parked it on approval `approval_id`: arm the deadline, or wake the run when
/// the approval was decided while the actor was still parking.
void watch_approval(kernel_self self, const std::string& run_id, const std::string& approval_id) {
  read_store(
    self,
    [run_id, approval_id](persistence::store& s) {
      parked_on_view v;
      auto a = s.get_approval(approval_id);
      if (!a || !a->has_value())
        return v;
      v.a = std::move(**a);
      if (v.a->state == approval_state::pending)
        return v;
      auto r = s.get_run(run_id);
      if (!r || !r->has_value())
        return v;
      v.r = std::move(**r);
      auto steps = s.get_steps(run_id);
      if (steps)
        v.steps = std::move(*steps);
      else
        v.err = steps.error();
      return v;
    },
    [self, run_id, approval_id](parked_on_view v) {
      auto& rt = *self->state.rt;
      if (!v.a) {
        rt.log->error("run {} parked on approval {} that cannot be read", run_id, approval_id);
      } else if (v.a->state == approval_state::pending) {
        add_timer(self, *v.a);
      } else if (v.r && v.err) {
        rt.log->error("cannot resume run {}: {}", run_id, v.err.message);
      } else if (v.r) {
        // Decided while the actor was still parking (the decision found it active and left
        // it): wake it now.
        resume_with(self, std::move(*v.r), *v.a, std::move(v.steps));
      }
      release_run(self, run_id);
    });
}

/// What cancelling parked run `r` commits: its pending approval expired (its timer dropped),
/// the run cancelled by `by`. Updates `r`.
persistence::write_batch cancel_batch(kernel_self self, run& r, std::optional<approval>& pending,
                                      const std::string& by) {
  auto& rt = *self->state.rt;
  persistence::write_batch b;
  if (pending && pending->state == approval_state::pending) {
    auto ap = *pending;
    ap.state = approval_state::expired;
    ap.decided_at = rt.clock.now_us();
    drop_timer(self, ap);
    rt.counters.pending_approvals.fetch_sub(1, std::memory_order_relaxed);
    b.events.push_back(parked_event(rt, r, "approval.expired",
                                    json::object("approval", ap.id, "reason", "run cancelled")));
    b.approvals.push_back(std::move(ap));
  }
  r.state = run_state::cancelled;
  r.waiting_for = wait_reason::none;
  r.error = "cancelled by " + by;
  b.events.push_back(
    parked_event(rt, r, "run.cancelled", json::object("message", r.error, "steps", r.steps)));
  b.update = r;
  return b;
}

/// The operation that cancels a parked run (its turn on the run has come).
void cancel_op(kernel_self self, const std::string& id, const std::string& by,
               caf::typed_response_promise<kernel_reply> rp) {
  if (auto active = self->state.runs.find(id); active != self->state.runs.end()) {
    // Woken up meanwhile (its approval settled): the run's own actor cancels it.
    self->request(active->second, caf::infinite, cancel_atom::value, id, by)
      .then([rp](kernel_reply& rep) mutable { rp.deliver(std::move(rep)); },
            [rp](caf::error& e) mutable {
              rp.deliver(reply_error(errc::conflict, "the run ended: " + caf::to_string(e)));
            });
    return release_run(self, id);
  }
  struct view {
    expected<std::optional<run>> r;
    std::optional<approval> a; // the pending approval of its last step
  };
  read_store(
    self,
    [id](persistence::store& s) {
      view v{s.get_run(id), std::nullopt};
      if (v.r && v.r->has_value() && !is_terminal((*v.r)->state))
        if (auto a = s.approval_for_step(id, (*v.r)->steps); a && a->has_value())
          v.a = std::move(**a);
      return v;
    },
    [self, id, by, rp](view v) mutable {
      auto& r = v.r;
      if (!r || !r->has_value() || is_terminal((*r)->state)) {
        rp.deliver(!r ? reply_error(errc::unavailable, r.error().message)
                   : !r->has_value()
                     ? reply_error(errc::not_found, fmt::format("no run with id '{}'", id))
                     : reply_error(errc::conflict, fmt::format("run {} has already ended ({})", id,
                                                               to_string((*r)->state))));
        return release_run(self, id);
      }
      run cancelled = **r;
      bool had_runs = cancelled.waiting_for == wait_reason::runs;
      auto b = cancel_batch(self, cancelled, v.a, by);
      kernel_commit(
        self, std::move(b),
        [self, rp, id, by, had_runs, parent = cancelled.parent](const sreh::error& err) mutable {
          if (err) {
            rp.deliver(reply_error(err.code, err.message));
          } else {
            self->state.rt->counters.parked.fetch_sub(1, std::memory_order_relaxed);
            if (had_runs)
              cancel_runs_of(self, id, by);
            if (!parent.empty())
              check_runs(self, parent, false, false);
            kernel_reply rep;
            rep.run_id = id;
            rep.state = run_state::cancelled;
            rp.deliver(rep);
          }
          release_run(self, id);
        });
    });
}

} // namespace

void withdraw_parked(kernel_self self, run r, approval a, std::function<void()> then) {
  drop_timer(self, a);
  self->state.rt->counters.pending_approvals.fetch_sub(1, std::memory_order_relaxed);
  resume_run(self, std::move(r), std::move(a), std::move(then));
}

void recover_parked(kernel_self self, recovery_item& item) {
  auto& rt = *self->state.rt;
  const auto& r = item.r;
  rt.counters.parked.fetch_add(1, std::memory_order_relaxed);
  if (r.waiting_for == wait_reason::runs) // its runs may have ended while the node was down
    return check_runs(self, r.id, false, true);
  if (r.waiting_for == wait_reason::timer) {
    if (!item.timer_until) {
      rt.log->warn("run {} waits for a timer it has no step for; it stays parked", r.id);
      return;
    }
    self->state.timers.emplace(*item.timer_until, r.id);
    return arm_timer(self);
  }
  if (!item.parked_on) {
    rt.log->warn("run {} waits but has no approval for step {}; it stays parked", r.id, r.steps);
    return;
  }
  if (item.parked_on->state == approval_state::pending) {
    rt.counters.pending_approvals.fetch_add(1, std::memory_order_relaxed);
    return add_timer(self, *item.parked_on);
  }
  // Settled while the node was down.
  if (item.err) {
    rt.log->error("cannot resume run {}: {}", r.id, item.err.message);
    return;
  }
  resume_with(self, std::move(item.r), *item.parked_on, std::move(item.steps));
}

void on_parked(kernel_self self, const std::string& run_id, const std::string& approval_id,
               timestamp_us until) {
  auto& rt = *self->state.rt;
  // The run's actor is quitting: from now on the run counts as passivated, so a decision that
  // settles its approval wakes it (resume_run skips runs it still finds active).
  self->state.runs.erase(run_id);
  rt.counters.parked.fetch_add(1, std::memory_order_relaxed);
  if (approval_id.empty()) { // a durable timer
    if (rt.replay.timers_at_once)
      until = std::min(until, rt.clock.now_us());
    self->state.timers.emplace(until, run_id);
    return arm_timer(self);
  }
  rt.counters.pending_approvals.fetch_add(1, std::memory_order_relaxed);
  with_run(self, run_id,
           [self, run_id, approval_id] { watch_approval(self, run_id, approval_id); });
}

caf::result<kernel_reply> decide(kernel_self self, const std::string& approval_id,
                                 const approval_vote& vote) {
  auto rp = self->make_response_promise<kernel_reply>();
  read_store(
    self, [approval_id](persistence::approval_store& s) { return s.get_approval(approval_id); },
    [self, approval_id, vote, rp](expected<std::optional<approval>> a) mutable {
      if (!a || !a->has_value()) {
        rp.deliver(
          !a ? reply_error(errc::unavailable, a.error().message)
             : reply_error(errc::not_found, fmt::format("no approval with id '{}'", approval_id)));
        return;
      }
      auto run_id = (*a)->run_id;
      with_run(self, run_id, [self, approval_id, vote, rp, run_id] {
        apply_decision(self, approval_id, vote, rp, run_id);
      });
    });
  return rp;
}

caf::result<kernel_reply> cancel_parked(kernel_self self, const std::string& id,
                                        const std::string& by) {
  auto rp = self->make_response_promise<kernel_reply>();
  cancel_stored(self, id, by, rp);
  return rp;
}

void cancel_stored(kernel_self self, const std::string& id, const std::string& by,
                   caf::typed_response_promise<kernel_reply> rp) {
  read_store(
    self, [id](persistence::run_store& s) { return s.get_run(id); },
    [self, id, by, rp](expected<std::optional<run>> found) mutable {
      if (!found || !found->has_value()) {
        rp.deliver(!found ? reply_error(errc::unavailable, found.error().message)
                          : reply_error(errc::not_found, fmt::format("no run with id '{}'", id)));
        return;
      }
      if (auto err = owned_here(*self->state.rt, **found); err && !is_terminal((*found)->state)) {
        rp.deliver(reply_error(err.code, err.message));
        return;
      }
      with_run(self, id, [self, id, by, rp] { cancel_op(self, id, by, rp); });
    });
}

void on_timer(kernel_self self) {
  auto& st = self->state;
  st.armed = 0;
  auto now = st.rt->clock.now_us();
  while (!st.timers.empty() && st.timers.begin()->first <= now) {
    auto id = st.timers.begin()->second;
    st.timers.erase(st.timers.begin());
    if (id.rfind("run_", 0) == 0) {
      with_run(self, id, [self, id] { wake_run(self, id); });
      continue;
    }
    if (id.rfind("runs:", 0) == 0) { // a flow step's runs took longer than its timeout
      check_runs(self, id.substr(5), true, false);
      continue;
    }
    read_store(
      self, [id](persistence::approval_store& s) { return s.get_approval(id); },
      [self, id](expected<std::optional<approval>> a) {
        if (!a || !a->has_value())
          return;
        auto run_id = (*a)->run_id;
        with_run(self, run_id, [self, id, run_id] { expire(self, id, run_id); });
      });
  }
  arm_timer(self);
}

} // namespace sreh::actors
