// Parked runs: a run waiting for an approval has no actor; its approval is a durable record
// plus a deadline in the kernel's timer index. Votes, timeouts, escalation and cancellation are
// written by the kernel (one write at a time per run), and a settled approval respawns the run.

#include <fmt/format.h>

#include "actors/kernel/kernel_state.hpp"
#include "core/base/json.hpp"

namespace sreh::actors {

namespace {

/// Runs `op` once no other kernel write for run `run_id` is in flight; `op` must end by calling
/// release_run for the same run.
void with_run(kernel_self self, const std::string& run_id, std::function<void()> op) {
  auto& st = self->state;
  if (st.busy_runs.insert(run_id).second)
    return op();
  st.queued[run_id].push_back(std::move(op));
}

void release_run(kernel_self self, const std::string& run_id) {
  auto& st = self->state;
  auto q = st.queued.find(run_id);
  if (q == st.queued.end() || q->second.empty()) {
    st.queued.erase(run_id);
    st.busy_runs.erase(run_id);
    return;
  }
  auto op = std::move(q->second.front());
  q->second.pop_front();
  op();
}

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

/// Respawns a parked run with its settled approval.
void resume_run(kernel_self self, const run& r, const approval& a) {
  auto& st = self->state;
  if (st.runs.count(r.id) != 0)
    return; // already awake
  auto steps = st.rt->store.get_steps(r.id);
  if (!steps) {
    st.rt->log->error("cannot resume run {}: {}", r.id, steps.error().message);
    return;
  }
  st.rt->counters.parked.fetch_sub(1, std::memory_order_relaxed);
  self->send(activate(self, r, std::move(*steps)), resume_atom::value, json::to_json(a));
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
  return {errc::unavailable, fmt::format("run {} is owned by node '{}' now; retry", r.id,
                                         r.node_id)};
}

/// Loads a run and its approval for a kernel write; an error reply when either is missing.
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
    return sreh::error{errc::internal, fmt::format("approval {} names a missing run {}",
                                                   approval_id, (*a)->run_id)};
  if (auto err = owned_here(rt, **r))
    return err;
  return parked_view{std::move(**r), std::move(**a)};
}

kernel_reply approval_reply(const approval& a) {
  kernel_reply rep;
  rep.run_id = a.run_id;
  rep.payload = json::to_json(a);
  return rep;
}

std::string vote_data(const approval& a, const approval_vote& v) {
  std::int64_t yes = 0;
  for (auto& x : a.votes)
    yes += x.approve ? 1 : 0;
  return fmt::format(R"({{"approval":{},"by":{},"role":{},"approve":{},"comment":{},)"
                     R"("approvals":{},"required":{},"state":{}}})",
                     json::quote(a.id), json::quote(v.by), json::quote(v.role), v.approve,
                     json::quote(v.comment), yes, a.required, json::quote(to_string(a.state)));
}

void apply_decision(kernel_self self, const std::string& approval_id, const approval_vote& vote,
                    caf::typed_response_promise<kernel_reply> rp, const std::string& run_id) {
  auto& rt = *self->state.rt;
  auto v = load(rt, approval_id);
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
    b.events.push_back(parked_event(rt, v->r, "approval.decided",
                                    fmt::format(R"({{"approval":{},"state":{}}})",
                                                json::quote(v->a.id),
                                                json::quote(to_string(v->a.state)))));
  b.approvals.push_back(v->a);
  b.update = v->r;
  kernel_commit(self, std::move(b), [self, rp, view = *v, settled, run_id](const sreh::error& err) mutable {
    if (err) {
      rp.deliver(reply_error(err.code, err.message));
      return release_run(self, run_id);
    }
    rp.deliver(approval_reply(view.a));
    if (settled) {
      drop_timer(self, view.a);
      self->state.rt->counters.pending_approvals.fetch_sub(1, std::memory_order_relaxed);
      resume_run(self, view.r, view.a);
    }
    release_run(self, run_id);
  });
}

/// A deadline passed: escalate once if the rule says so, else the approval expires.
void expire(kernel_self self, const std::string& approval_id, const std::string& run_id) {
  auto& rt = *self->state.rt;
  auto v = load(rt, approval_id);
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
    std::string roles;
    for (auto& role : v->a.roles)
      roles += (roles.empty() ? "" : ",") + json::quote(role);
    char buf[32];
    b.events.push_back(parked_event(rt, v->r, "approval.escalated",
                                    fmt::format(R"({{"approval":{},"roles":[{}],"expires_at":{}}})",
                                                json::quote(v->a.id), roles,
                                                json::quote(format_rfc3339(v->a.expires_at, buf)))));
  } else {
    v->a.state = approval_state::expired;
    v->a.decided_at = now;
    b.events.push_back(parked_event(rt, v->r, "approval.expired",
                                    fmt::format(R"({{"approval":{}}})", json::quote(v->a.id))));
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
      resume_run(self, view.r, view.a);
    }
    release_run(self, run_id);
  });
}

} // namespace

/// Respawns a run whose durable timer fired.
void wake_run(kernel_self self, const std::string& run_id) {
  auto& st = self->state;
  auto r = st.rt->store.get_run(run_id);
  if (!r || !r->has_value() || (*r)->state != run_state::waiting
      || (*r)->waiting_for != wait_reason::timer || st.runs.count(run_id) != 0)
    return; // cancelled or already awake meanwhile
  auto steps = st.rt->store.get_steps(run_id);
  if (!steps) {
    st.rt->log->error("cannot wake run {}: {}", run_id, steps.error().message);
    return;
  }
  st.rt->counters.parked.fetch_sub(1, std::memory_order_relaxed);
  self->send(activate(self, std::move(**r), std::move(*steps)), timer_atom::value);
}

timestamp_us timer_deadline(const step& s) {
  auto doc = json::parse(s.args);
  if (!doc || !doc->IsObject() || !doc->HasMember("until_us") || !(*doc)["until_us"].IsInt64())
    return 0;
  return (*doc)["until_us"].GetInt64();
}

void recover_parked(kernel_self self, const run& r) {
  auto& rt = *self->state.rt;
  rt.counters.parked.fetch_add(1, std::memory_order_relaxed);
  if (r.waiting_for == wait_reason::timer) {
    auto steps = rt.store.get_steps(r.id);
    if (!steps || steps->empty() || steps->back().kind != step_kind::timer) {
      rt.log->warn("run {} waits for a timer it has no step for; it stays parked", r.id);
      return;
    }
    self->state.timers.emplace(timer_deadline(steps->back()), r.id);
    return arm_timer(self);
  }
  auto a = rt.store.approval_for_step(r.id, r.steps);
  if (!a || !a->has_value()) {
    rt.log->warn("run {} waits but has no approval for step {}; it stays parked", r.id, r.steps);
    return;
  }
  if ((*a)->state == approval_state::pending) {
    rt.counters.pending_approvals.fetch_add(1, std::memory_order_relaxed);
    return add_timer(self, **a);
  }
  resume_run(self, r, **a); // settled while the node was down
}

void on_parked(kernel_self self, const std::string& run_id, const std::string& approval_id,
               timestamp_us until) {
  auto& rt = *self->state.rt;
  // The run's actor is quitting: from now on the run counts as passivated, so a decision that
  // settles its approval wakes it (resume_run skips runs it still finds active).
  self->state.runs.erase(run_id);
  rt.counters.parked.fetch_add(1, std::memory_order_relaxed);
  if (approval_id.empty()) { // a durable timer
    self->state.timers.emplace(until, run_id);
    return arm_timer(self);
  }
  rt.counters.pending_approvals.fetch_add(1, std::memory_order_relaxed);
  auto a = rt.store.get_approval(approval_id);
  if (!a || !a->has_value()) {
    rt.log->error("run {} parked on approval {} that cannot be read", run_id, approval_id);
    return;
  }
  if ((*a)->state == approval_state::pending)
    return add_timer(self, **a);
  // Decided while the actor was still parking (the decision found it active and left it):
  // wake it now.
  auto r = rt.store.get_run(run_id);
  if (r && r->has_value())
    resume_run(self, **r, **a);
}

caf::result<kernel_reply> decide(kernel_self self, const std::string& approval_id,
                                 const approval_vote& vote) {
  auto a = self->state.rt->store.get_approval(approval_id);
  if (!a)
    return reply_error(errc::unavailable, a.error().message);
  if (!a->has_value())
    return reply_error(errc::not_found, fmt::format("no approval with id '{}'", approval_id));
  auto rp = self->make_response_promise<kernel_reply>();
  auto run_id = (*a)->run_id;
  with_run(self, run_id, [self, approval_id, vote, rp, run_id] {
    apply_decision(self, approval_id, vote, rp, run_id);
  });
  return rp;
}

caf::result<kernel_reply> cancel_parked(kernel_self self, const std::string& id,
                                        const std::string& by) {
  auto found = self->state.rt->store.get_run(id);
  if (!found)
    return reply_error(errc::unavailable, found.error().message);
  if (!found->has_value())
    return reply_error(errc::not_found, fmt::format("no run with id '{}'", id));
  if (auto err = owned_here(*self->state.rt, **found); err && !is_terminal((*found)->state))
    return reply_error(err.code, err.message);
  auto rp = self->make_response_promise<kernel_reply>();
  with_run(self, id, [self, id, by, rp]() mutable {
    auto& rt = *self->state.rt;
    if (auto active = self->state.runs.find(id); active != self->state.runs.end()) {
      // Woken up meanwhile (its approval settled): the run's own actor cancels it.
      self->request(active->second, caf::infinite, cancel_atom::value, id, by)
        .then([rp](kernel_reply& rep) mutable { rp.deliver(std::move(rep)); },
              [rp](caf::error& e) mutable {
                rp.deliver(reply_error(errc::conflict, "the run ended: " + caf::to_string(e)));
              });
      return release_run(self, id);
    }
    auto r = rt.store.get_run(id);
    if (!r || !r->has_value() || is_terminal((*r)->state)) {
      rp.deliver(!r ? reply_error(errc::unavailable, r.error().message)
                 : !r->has_value()
                   ? reply_error(errc::not_found, fmt::format("no run with id '{}'", id))
                   : reply_error(errc::conflict, fmt::format("run {} has already ended ({})", id,
                                                             to_string((*r)->state))));
      return release_run(self, id);
    }
    persistence::write_batch b;
    run cancelled = **r;
    auto a = rt.store.approval_for_step(id, cancelled.steps);
    if (a && a->has_value() && (*a)->state == approval_state::pending) {
      auto ap = **a;
      ap.state = approval_state::expired;
      ap.decided_at = rt.clock.now_us();
      drop_timer(self, ap);
      rt.counters.pending_approvals.fetch_sub(1, std::memory_order_relaxed);
      b.events.push_back(parked_event(rt, cancelled, "approval.expired",
                                      fmt::format(R"({{"approval":{},"reason":"run cancelled"}})",
                                                  json::quote(ap.id))));
      b.approvals.push_back(std::move(ap));
    }
    cancelled.state = run_state::cancelled;
    cancelled.waiting_for = wait_reason::none;
    cancelled.error = "cancelled by " + by;
    b.events.push_back(parked_event(rt, cancelled, "run.cancelled",
                                    fmt::format(R"({{"message":{},"steps":{}}})",
                                                json::quote(cancelled.error), cancelled.steps)));
    b.update = cancelled;
    kernel_commit(self, std::move(b), [self, rp, id](const sreh::error& err) mutable {
      if (err) {
        rp.deliver(reply_error(err.code, err.message));
      } else {
        self->state.rt->counters.parked.fetch_sub(1, std::memory_order_relaxed);
        kernel_reply rep;
        rep.run_id = id;
        rep.state = static_cast<int>(run_state::cancelled);
        rp.deliver(rep);
      }
      release_run(self, id);
    });
  });
  return rp;
}

void on_timer(kernel_self self) {
  auto& st = self->state;
  st.armed = 0;
  auto now = st.rt->clock.now_us();
  while (!st.timers.empty() && st.timers.begin()->first <= now) {
    auto id = st.timers.begin()->second;
    st.timers.erase(st.timers.begin());
    if (id.rfind("run_", 0) == 0) {
      with_run(self, id, [self, id] {
        wake_run(self, id);
        release_run(self, id);
      });
      continue;
    }
    auto a = st.rt->store.get_approval(id);
    if (!a || !a->has_value())
      continue;
    auto run_id = (*a)->run_id;
    with_run(self, run_id, [self, id, run_id] { expire(self, id, run_id); });
  }
  arm_timer(self);
}

} // namespace sreh::actors
