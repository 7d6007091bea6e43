// The actor of one Work while it is active: applies commands, starts and cancels its runs,
// evaluates its done-criteria against world state and announces SLA breaches. Every change is
// committed (the Work's row with its timeline events) before it is answered or acted on; one
// operation runs at a time, the others wait in order. State lives in the store: the actor may
// quit whenever it is idle (the orchestrator passivates it) and is spawned again from its row.

#include <stdexcept>

#include "actors/works/work_impl.hpp"
#include "core/base/failpoint.hpp"
#include "core/base/fault.hpp"
#include "core/works/lifecycle.hpp"

namespace sreh::actors {

namespace {

using work_impl::context_spec;
using work_impl::read_history;
using work_impl::run_labels;
using work_impl::run_request;
using work_impl::standing_constraints;
using work_impl::tell_active_run;
using work_impl::work_actor_state;
using work_impl::work_history;
using work_impl::work_self;

void append(works::effects& into, works::effects from) {
  for (auto& e : from.entries)
    into.entries.push_back(std::move(e));
  into.start_run = into.start_run || from.start_run;
  into.cancel_run = into.cancel_run || from.cancel_run;
}

// -- one operation at a time -------------------------------------------------------------------

void done_op(work_self self);

void run_op(work_self self, std::function<void()> op) {
  auto& st = self->state;
  if (st.busy) {
    st.ops.push_back(std::move(op));
    return;
  }
  st.busy = true;
  op();
}

void done_op(work_self self) {
  auto& st = self->state;
  st.busy = false;
  if (!st.ops.empty()) {
    auto next = std::move(st.ops.front());
    st.ops.pop_front();
    st.busy = true;
    next();
    return;
  }
  if (st.stopping)
    self->quit();
}

// -- commits -----------------------------------------------------------------------------------

/// Tells the orchestrator when to look at the Work again.
void schedule(work_self self) {
  auto& st = self->state;
  self->send(st.orch, schedule_atom::value, st.w.id, st.w.next_check);
}

/// Commits the Work as it is now with `fx`'s entries as its events; on failure the Work goes
/// back to `before`. `then` runs after the commit either way, with its error.
void commit(work_self self, const works::effects& fx, works::work before,
            std::function<void(const sreh::error&)> then) {
  auto& st = self->state;
  auto& rt = *st.env->rt;
  persistence::write_batch b;
  add_timeline(*st.env, st.w, st.t, fx, b);
  b.update_work = st.w;
  commit_batch(
    work_actor{self}, st.calls, rt.writer, std::move(b),
    [self, before = std::move(before),
     then = std::move(then)](persistence::commit_result res) mutable {
      auto& st = self->state;
      if (res.err.code == errc::conflict) {
        // Fenced: a survivor took the Work over while this node was cut off.
        st.env->log->warn("work {}: {}; leaving it to that node", st.w.id, res.err.message);
        st.w = std::move(before);
        st.stopping = true;
      } else if (res.err) {
        st.env->rt->commit_errors.log(*st.env->log, spdlog::level::err,
                                      "work {}: commit failed: {}", st.w.id, res.err.message);
        st.w = std::move(before);
      } else {
        for (const auto& e : res.events)
          st.env->log->debug("work {}: {}", st.w.id, e.kind);
        if (!works::is_closed(before.state) && works::is_closed(st.w.state) && st.env->work_closed)
          st.env->work_closed(st.w.id);
      }
      schedule(self);
      then(res.err);
    });
}

void start_run(work_self self);
void cancel_run(work_self self, const std::string& by);

/// Commits `fx` (when it has entries) and then does what it says; `then` after the commit.
void apply(work_self self, works::effects fx, works::work before,
           std::function<void(const sreh::error&)> then, const std::string& by = "orchestrator") {
  if (fx.entries.empty() && !fx.start_run && !fx.cancel_run) {
    self->state.w.next_check =
      works::next_check(self->state.w, self->state.t, self->state.env->check_every_us,
                        self->state.env->rt->clock.now_us());
    schedule(self);
    return then({});
  }
  const bool start = fx.start_run;
  const bool cancel = fx.cancel_run;
  commit(self, fx, std::move(before), [self, start, cancel, by, then](const sreh::error& err) {
    if (!err) {
      if (cancel)
        cancel_run(self, by);
      if (start)
        self->send(self, start_atom::value); // its own operation, after this one
    }
    then(err);
  });
}

// -- runs --------------------------------------------------------------------------------------

void submit_run(work_self self, goal_request req);

void start_run(work_self self) {
  run_op(self, [self] {
    auto& st = self->state;
    if (st.w.queued <= 0 || !st.w.active_run.empty() || works::is_closed(st.w.state))
      return done_op(self);
    auto req0 = run_request(st);
    if (req0 && req0->kind != "flow") { // a goal run starts with the Work's story
      auto rt = st.env->rt;
      return read_store(
        work_actor{self}, st.calls, rt->store, rt->store_pool,
        [w = st.w](persistence::store& s) { return read_history(s, w, true); },
        [self, req = std::move(*req0)](expected<work_history> h) mutable {
          auto& st = self->state;
          if (h) {
            req.spec = context_spec(st.w, *h);
            req.opening = standing_constraints(*h);
          } else
            st.env->log->warn("work {}: its next run starts without its history: {}", st.w.id,
                              h.error().message);
          submit_run(self, std::move(req));
        });
    }
    if (!req0) {
      auto before = st.w;
      auto fx = works::on_run_refused(st.w, req0.error().message, st.env->rt->clock.now_us());
      return apply(self, std::move(fx), std::move(before), [self](auto&) { done_op(self); });
    }
    submit_run(self, std::move(*req0));
  });
}

/// Submits the Work's next run (inside start_run's operation).
void submit_run(work_self self, goal_request req) {
  auto& st = self->state;
  const auto n = st.w.triggers + 1;
  req.idempotency_key = works::run_key(st.w, n);
  req.submitter = st.w.creator;
  req.labels = run_labels(st);
  auto retry = [self](const std::string& why) {
    auto& st = self->state;
    st.env->log->warn("work {}: starting its run failed ({}); retrying", st.w.id, why);
    st.w.next_check = st.env->rt->clock.now_us() + 1'000'000;
    schedule(self);
    done_op(self);
  };
  self->request(st.env->kernel, std::chrono::seconds(30), submit_atom::value, std::move(req))
    .then(
      [self, n, retry](kernel_reply& rep) {
        auto& st = self->state;
        const auto now = st.env->rt->clock.now_us();
        if (rep.err.code == errc::unavailable)
          return retry(rep.err.message);
        auto before = st.w;
        if (rep.err) {
          auto fx = works::on_run_refused(st.w, rep.err.message, now);
          return apply(self, std::move(fx), std::move(before), [self](auto&) { done_op(self); });
        }
        auto fx = works::on_run_started(st.w, rep.run_id, n, rep.created, now);
        auto run_id = rep.run_id;
        apply(self, std::move(fx), std::move(before), [self, run_id](const sreh::error& err) {
          if (!err) {
            self->send(self->state.orch, watch_run_atom::value, run_id, self->state.w.id);
            self->send(self, check_atom::value); // it may have ended already
          }
          done_op(self);
        });
      },
      [self, retry](caf::error& err) { retry(self->system().render(err)); });
}

void cancel_run(work_self self, const std::string& by) {
  auto& st = self->state;
  if (st.w.active_run.empty())
    return;
  auto run_id = st.w.active_run;
  self->request(st.env->kernel, std::chrono::seconds(30), cancel_atom::value, run_id, by)
    .then(
      [self, run_id](kernel_reply& rep) {
        if (rep.err && rep.err.code != errc::conflict) // conflict: it had ended already
          self->state.env->log->warn("work {}: cancelling run {} failed: {}", self->state.w.id,
                                     run_id, rep.err.message);
      },
      [self, run_id](caf::error& err) {
        self->state.env->log->warn("work {}: cancelling run {} failed: {}", self->state.w.id,
                                   run_id, self->system().render(err));
      });
}

void run_ended(work_self self, const std::string& run_id, const std::string& state,
               const std::string& outcome) {
  run_op(self, [self, run_id, state, outcome] {
    auto& st = self->state;
    auto before = st.w;
    auto fx = works::on_run_ended(st.w, run_id, state, st.env->rt->clock.now_us(), outcome);
    if (fx.entries.empty())
      return done_op(self);
    apply(self, std::move(fx), std::move(before), [self](const sreh::error& err) {
      if (!err)
        self->send(self, check_atom::value); // the run's end is when the criteria matter
      done_op(self);
    });
  });
}

// -- checks: SLA clocks, the active run, the done-criteria -------------------------------------

/// The done-criteria against the current world graph, at the graph's time.
std::pair<expected<bool>, timestamp_us> evaluate(const work_actor_state& st) {
  if (!st.done)
    return {sreh::error{errc::invalid_argument, st.done_error}, 0};
  auto world = st.env->world->current();
  if (!world)
    return {sreh::error{errc::unavailable, "no world state yet (the node has no world source)"}, 0};
  auto holds = st.done->evaluate(
    [&world](const std::string& entity, const std::string& metric) -> expected<double> {
      return world::metric(world->entities, entity, metric);
    });
  return {std::move(holds), world->world_at};
}

void check(work_self self) {
  run_op(self, [self] {
    auto& st = self->state;
    const auto now = st.env->rt->clock.now_us();
    auto before = st.w;
    auto fx = works::on_sla(st.w, st.t.sla, now);
    for (const auto& e : fx.entries)
      st.env->log->warn("work {}: SLA breached: {}", st.w.id, e.data);
    auto criteria = [self](works::effects fx, works::work before) {
      auto& st = self->state;
      if (st.t.done) {
        auto [holds, world_at] = evaluate(st);
        append(fx, works::on_criteria(st.w, holds, world_at, st.t.done->for_s,
                                      st.last_criteria_error, st.env->rt->clock.now_us()));
        st.last_criteria_error = holds ? std::string{} : holds.error().message;
      }
      if (st.w.queued > 0 && st.w.active_run.empty() && !works::is_closed(st.w.state))
        fx.start_run = true; // queued before a restart or a takeover
      apply(self, std::move(fx), std::move(before), [self](auto&) { done_op(self); });
    };
    if (st.w.active_run.empty())
      return criteria(std::move(fx), std::move(before));
    // The active run may have ended without the orchestrator hearing of it (a restart).
    auto run_id = st.w.active_run;
    auto rt = st.env->rt;
    read_store(
      work_actor{self}, st.calls, rt->store, rt->store_pool,
      [run_id](persistence::run_store& s) { return s.get_run(run_id); },
      [self, run_id, criteria, fx = std::move(fx),
       before = std::move(before)](expected<std::optional<run>> r) mutable {
        auto& st = self->state;
        if (r && *r && is_terminal((*r)->state))
          append(fx, works::on_run_ended(st.w, run_id, to_string((*r)->state),
                                         st.env->rt->clock.now_us(), (*r)->outcome));
        criteria(std::move(fx), std::move(before));
      });
  });
}

// -- commands ----------------------------------------------------------------------------------

caf::result<work_reply> command(work_self self, std::int32_t c, const std::string& by,
                                const std::string& text) {
  auto rp = self->make_response_promise<work_reply>();
  run_op(self, [self, rp, c, by, text]() mutable {
    auto& st = self->state;
    auto before = st.w;
    auto fx = works::apply_command(st.w, st.t, static_cast<works::work_command>(c), by, text,
                                   st.env->rt->clock.now_us());
    if (!fx) {
      st.w = std::move(before);
      rp.deliver(work_reply{fx.error(), {}, false});
      return done_op(self);
    }
    apply(
      self, std::move(*fx), std::move(before),
      [self, rp, c](const sreh::error& err) mutable {
        if (err)
          rp.deliver(work_reply{err, {}, false});
        else
          rp.deliver(work_reply{{}, self->state.w, false});
        if (!err)
          self->send(self, check_atom::value); // a reopen or a resolve moves the clocks
        const auto cmd = static_cast<works::work_command>(c);
        const bool joined = cmd == works::work_command::trigger &&
                            self->state.t.on_trigger == works::double_texting::join;
        if (!err && (cmd == works::work_command::comment || joined)) {
          failpoint("after_work_comment", 1); // said, its run not yet told (tests: kill -9)
          tell_active_run(self);              // the active run hears what was said
        }
        done_op(self);
      },
      by);
  });
  return rp;
}

work_actor::behavior_type work_behavior(work_self self, orchestrator_impl_actor orch,
                                        works_env_ptr env, works::work w, works::work_template t) {
  auto& st = self->state;
  st.env = std::move(env);
  st.orch = std::move(orch);
  st.w = std::move(w);
  st.t = std::move(t);
  if (auto values = works::resolve_fields(st.t, st.w.fields))
    st.values = std::move(*values);
  else
    st.env->log->error("work {}: its fields no longer fit template {} ({})", st.w.id, st.t.name,
                       values.error().message);
  if (st.t.done) {
    auto text = works::render(st.t.done->condition.text, st.values);
    auto parsed = text ? expr::parse(*text) : expected<expr::expression>{text.error()};
    if (parsed)
      st.done = std::move(*parsed);
    else
      st.done_error = "done-criteria: " + parsed.error().message;
  }
  // The orchestrator learns of the Work's active run and next timer from its actor (after a
  // restart or a takeover it knows only the row's id).
  if (!st.w.active_run.empty()) {
    self->send(st.orch, watch_run_atom::value, st.w.active_run, st.w.id);
    tell_active_run(self); // what a crash kept from it (what it heard is not said twice)
  }
  self->send(st.orch, schedule_atom::value, st.w.id, st.w.next_check);
  return {
    [=](command_atom, std::int32_t c, const std::string& by,
        const std::string& text) -> caf::result<work_reply> {
      if (fault("works.command"))
        throw std::runtime_error("fault injected at works.command");
      return command(self, c, by, text);
    },
    [=](start_atom) { start_run(self); },
    [=](run_ended_atom, const std::string& run_id, const std::string& state,
        const std::string& outcome) { run_ended(self, run_id, state, outcome); },
    [=](check_atom) { check(self); },
    [=](passivate_atom) {
      self->state.stopping = true;
      if (!self->state.busy)
        self->quit();
    },
    [=](called_atom, std::uint64_t token) { self->state.calls.complete(token); },
  };
}

} // namespace

void add_timeline(const works_env& env, works::work& w, const works::work_template& t,
                  const works::effects& fx, persistence::write_batch& b) {
  const auto now = env.rt->clock.now_us();
  w.next_check = works::next_check(w, t, env.check_every_us, now);
  for (const auto& e : fx.entries) {
    event ev;
    ev.id = env.rt->ids.next("evt");
    ev.run_id = w.id;
    ev.run_seq = ++w.seq;
    ev.kind = e.kind;
    ev.at = now;
    ev.data = e.data;
    b.events.push_back(std::move(ev));
  }
}

work_actor spawn_work(caf::local_actor* parent, orchestrator_impl_actor orch, works_env_ptr env,
                      works::work w, works::work_template t) {
  return parent->spawn<caf::linked>(work_behavior, std::move(orch), std::move(env), std::move(w),
                                    std::move(t));
}

} // namespace sreh::actors
