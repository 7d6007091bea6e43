// The orchestrator of the Works control plane: makes Works, keeps their durable timers, routes
// what concerns a Work to its actor and passivates the idle ones. An idle Work costs an entry
// in the timer map (and one in the run map while a run of it is active); its state is its row.

#include "actors/works/orchestrator.hpp"

#include <fmt/format.h>

#include <unordered_map>
#include <unordered_set>

#include "actors/runtime/supervisor.hpp"
#include "actors/works/forward.hpp"
#include "actors/works/make_work.hpp"
#include "config/templates/template_file.hpp"
#include "core/base/fault.hpp"
#include "core/base/json.hpp"
#include "core/expr/expression.hpp"

namespace sreh::actors {

namespace {

/// The `outcome` of a run's end event ("" when it has none).
std::string outcome_in(const std::string& data) {
  auto doc = json::parse(data);
  if (!doc || !doc->IsObject())
    return {};
  auto m = doc->FindMember("outcome");
  return m != doc->MemberEnd() && m->value.IsString() ? std::string{m->value.GetString()}
                                                      : std::string{};
}

using waiter = std::function<void(expected<work_actor>)>;

struct live_work {
  work_actor actor;
  timestamp_us last_used = 0;
  bool stopping = false; // told to passivate: new messages wait for its successor
};

struct orchestrator_state {
  works_env_ptr env;
  pending_calls calls;
  bool recovering = true;
  bool recovery_failed = false; // the sweep tries again
  std::unordered_map<std::string, live_work> live;
  std::unordered_map<caf::actor_addr, std::string> ids_by_addr;
  std::unordered_map<std::string, std::vector<waiter>> waiting; // for an actor being made
  std::unordered_set<std::string> loading;
  std::unordered_map<std::string, std::string> run_to_work; // the Works' active runs
  /// Works another member owns, by id: the owner their row named when last loaded.
  std::unordered_map<std::string, std::string> elsewhere;
  std::multimap<timestamp_us, std::string> timers;
  std::unordered_map<std::string, timestamp_us> due; // the one timer of each Work
  timestamp_us armed = 0;
  static inline const char* name = "sreh.orchestrator";
};

using orchestrator_self = orchestrator_impl_actor::stateful_pointer<orchestrator_state>;

template <class Read, class Then>
void read_store(orchestrator_self self, Read read, Then then) {
  auto& rt = *self->state.env->rt;
  actors::read_store(orchestrator_impl_actor{self}, self->state.calls, rt.store, rt.store_pool,
                     std::move(read), std::move(then));
}

// -- Work actors -------------------------------------------------------------------------------

/// What activating a Work needs: its row and the template version it is pinned to.
struct loaded_work {
  sreh::error err;
  std::optional<works::work> w;
  std::optional<works::stored_template> t;
};

void spawned(orchestrator_self self, works::work w, works::work_template t) {
  auto& st = self->state;
  auto id = w.id;
  auto a = spawn_work(self, orchestrator_impl_actor{self}, st.env, std::move(w), std::move(t));
  st.ids_by_addr[a.address()] = id;
  st.live[id] = {a, st.env->rt->clock.now_us(), false};
  auto waiters = std::move(st.waiting[id]);
  st.waiting.erase(id);
  for (auto& f : waiters)
    f(a);
}

void fail_waiters(orchestrator_self self, const std::string& id, const sreh::error& err) {
  auto waiters = std::move(self->state.waiting[id]);
  self->state.waiting.erase(id);
  for (auto& f : waiters)
    f(err);
}

/// Spawns the actor of Work `id` from its row.
void activate(orchestrator_self self, const std::string& id) {
  self->state.loading.insert(id);
  read_store(
    self,
    [id](persistence::work_store& s) {
      loaded_work out;
      auto w = s.get_work(id);
      if (!w) {
        out.err = w.error();
        return out;
      }
      out.w = std::move(*w);
      if (out.w) {
        auto t = s.get_template(out.w->template_name, out.w->template_version);
        if (!t)
          out.err = t.error();
        else
          out.t = std::move(*t);
      }
      return out;
    },
    [self, id](loaded_work got) {
      auto& st = self->state;
      st.loading.erase(id);
      if (got.err)
        return fail_waiters(self, id, got.err);
      if (!got.w)
        return fail_waiters(self, id, {errc::not_found, "work " + id + " not found"});
      if (const auto& me = st.env->rt->cfg.node_id; got.w->node_id != me) {
        if (st.env->routing)
          st.elsewhere[id] = got.w->node_id; // a command then goes there (forward.hpp)
        return fail_waiters(self, id,
                            {errc::conflict, fmt::format("work {} is owned by node '{}': send "
                                                         "the request there (GET "
                                                         "/v1/cluster/nodes lists its address)",
                                                         id, got.w->node_id)});
      }
      expected<works::work_template> t =
        sreh::error{errc::internal, fmt::format("work {}: template {} version {} is not stored", id,
                                                got.w->template_name, got.w->template_version)};
      if (got.t)
        t = config::load_template_string(got.t->text, got.t->name + "@" + got.t->version);
      if (!t) {
        st.env->log->error("work {}: {}", id, t.error().message);
        return fail_waiters(self, id, t.error());
      }
      spawned(self, std::move(*got.w), std::move(*t));
    });
}

/// Runs `f` with the actor of Work `id`, activating it first when it has none.
void with_work(orchestrator_self self, const std::string& id, waiter f) {
  auto& st = self->state;
  if (auto i = st.live.find(id); i != st.live.end() && !i->second.stopping) {
    i->second.last_used = st.env->rt->clock.now_us();
    return f(i->second.actor);
  }
  st.waiting[id].push_back(std::move(f));
  if (!st.live.count(id) && !st.loading.count(id))
    activate(self, id);
}

void on_exit(orchestrator_self self, const caf::exit_msg& msg) {
  auto& st = self->state;
  auto i = st.ids_by_addr.find(msg.source);
  if (i == st.ids_by_addr.end()) {
    self->quit(msg.reason); // our own shutdown: the linked Work actors go with us
    return;
  }
  auto id = i->second;
  st.ids_by_addr.erase(i);
  st.live.erase(id);
  if (msg.reason && msg.reason != caf::exit_reason::normal)
    st.env->log->error("work {}: its actor died ({}); it is recovered from the store", id,
                       self->system().render(msg.reason));
  if (auto w = st.waiting.find(id); w != st.waiting.end() && !w->second.empty())
    activate(self, id);
}

void passivate_idle(orchestrator_self self) {
  auto& st = self->state;
  const auto now = st.env->rt->clock.now_us();
  for (auto& [id, l] : st.live)
    if (!l.stopping && now - l.last_used >= st.env->passivate_after_us) {
      l.stopping = true;
      self->send(l.actor, passivate_atom::value);
    }
  self->delayed_send(
    self,
    std::chrono::microseconds(std::max<std::int64_t>(st.env->passivate_after_us / 2, 1'000'000)),
    sweep_atom::value);
}

// -- timers ------------------------------------------------------------------------------------

void arm(orchestrator_self self) {
  auto& st = self->state;
  if (st.timers.empty())
    return;
  const auto first = st.timers.begin()->first;
  if (st.armed != 0 && st.armed <= first)
    return;
  st.armed = first;
  const auto delay = std::max<std::int64_t>(0, first - st.env->rt->clock.now_us());
  self->delayed_send(self, std::chrono::microseconds(delay), timer_atom::value);
}

void set_timer(orchestrator_self self, const std::string& id, timestamp_us at) {
  auto& st = self->state;
  if (at == 0) {
    st.due.erase(id);
    return;
  }
  if (auto d = st.due.find(id); d != st.due.end() && d->second == at)
    return;
  st.due[id] = at;
  st.timers.emplace(at, id);
  arm(self);
}

void on_timer(orchestrator_self self) {
  auto& st = self->state;
  st.armed = 0;
  const auto now = st.env->rt->clock.now_us();
  while (!st.timers.empty() && st.timers.begin()->first <= now) {
    auto [at, id] = *st.timers.begin();
    st.timers.erase(st.timers.begin());
    auto d = st.due.find(id);
    if (d == st.due.end() || d->second != at)
      continue; // replaced by a later schedule
    st.due.erase(d);
    with_work(self, id, [self, id](expected<work_actor> a) {
      if (a)
        self->send(*a, check_atom::value);
      else
        self->state.env->log->warn("work {}: its timer fired but it cannot be loaded: {}", id,
                                   a.error().message);
    });
  }
  arm(self);
}

// -- making Works ------------------------------------------------------------------------------

std::string known_templates(const works_env& env) {
  std::string out;
  for (const auto& [name, t] : env.templates)
    out += (out.empty() ? "" : ", ") + name;
  return out.empty() ? "none: set works.templates in the node config" : out;
}

caf::result<work_reply> create(orchestrator_self self, const new_work& req) {
  auto& env = *self->state.env;
  auto t = env.templates.find(req.template_name);
  if (t == env.templates.end())
    return work_reply{
      {errc::invalid_argument, fmt::format("template: no template '{}' (known: {})",
                                           req.template_name, known_templates(env))},
      {},
      false};
  auto w = make_work(env, t->second, req);
  if (!w)
    return work_reply{w.error(), {}, false};
  auto fx = works::on_created(*w, t->second);
  persistence::write_batch b;
  add_timeline(env, *w, t->second, fx, b);
  b.create_work = *w;
  b.templates.push_back(
    {t->second.name, t->second.version, t->second.kind, t->second.text, w->created_at});
  auto rp = self->make_response_promise<work_reply>();
  commit_batch(
    orchestrator_impl_actor{self}, self->state.calls, env.rt->writer, std::move(b),
    [self, rp, w = std::move(*w), tmpl = t->second,
     start = fx.start_run](persistence::commit_result res) mutable {
      if (res.err) {
        rp.deliver(work_reply{res.err, {}, false});
        return;
      }
      if (!res.existing_work_id.empty()) {
        auto existing = res.existing_work_id;
        return read_store(
          self, [existing](persistence::work_store& s) { return s.get_work(existing); },
          [rp, existing](expected<std::optional<works::work>> got) mutable {
            if (!got) {
              rp.deliver(work_reply{got.error(), {}, false});
              return;
            }
            if (!*got) {
              rp.deliver(work_reply{{errc::internal, "work " + existing + " vanished"}, {}, false});
              return;
            }
            rp.deliver(work_reply{{}, std::move(**got), false});
          });
      }
      auto& st = self->state;
      st.env->log->info("work {} created from template {} ({}): {}", w.id, w.template_name, w.kind,
                        w.title);
      rp.deliver(work_reply{{}, w, true});
      const auto id = w.id;
      const auto next = w.next_check;
      spawned(self, std::move(w), std::move(tmpl));
      set_timer(self, id, next);
      if (start)
        self->send(st.live[id].actor, start_atom::value);
    });
  return rp;
}

// -- recovery ----------------------------------------------------------------------------------

void recover(orchestrator_self self) {
  const auto node = self->state.env->rt->cfg.node_id;
  read_store(
    self, [node](persistence::work_store& s) { return s.open_works(node); },
    [self](expected<std::vector<works::work>> open) {
      auto& st = self->state;
      if (!open) {
        st.env->log->warn("works: recovery read failed ({}); retrying in 1 s",
                          open.error().message);
        st.recovery_failed = true;
        return;
      }
      std::size_t resumed = 0;
      for (const auto& w : *open) {
        if (!w.active_run.empty())
          st.run_to_work[w.active_run] = w.id;
        if (w.next_check != 0)
          set_timer(self, w.id, w.next_check);
        if (w.queued == 0 && w.active_run.empty())
          continue;
        ++resumed; // its check starts the queued run or follows the active one
        auto id = w.id;
        with_work(self, id, [self](expected<work_actor> a) {
          if (a)
            self->send(*a, check_atom::value);
        });
      }
      st.recovering = false;
      if (!open->empty())
        st.env->log->info("works: recovered {} open works ({} with a run to start or follow)",
                          open->size(), resumed);
    });
}

/// Run ends reach the Work that started the run; the hub's callback only enqueues.
void follow_run_ends(orchestrator_self self, event_hub* hub) {
  auto handle = orchestrator_impl_actor{self};
  auto token = hub->subscribe([handle](const event_hub::batch& b) {
    for (const auto& e : b->events)
      if (e.kind == "run.succeeded" || e.kind == "run.failed" || e.kind == "run.cancelled")
        caf::anon_send(handle, run_ended_atom::value, e.run_id, e.kind.substr(4),
                       outcome_in(e.data));
  });
  self->attach_functor([hub, token] { hub->unsubscribe(token); });
}

/// A command on a Work goes to its actor (woken when passivated).
/// Runs command `c` on Work `id` here; `rp` gets the Work actor's answer.
void command_here(orchestrator_self self, caf::typed_response_promise<work_reply> rp,
                  const std::string& id, std::int32_t c, std::string by, std::string text) {
  with_work(self, id, [rp, c, by, text](expected<work_actor> a) mutable {
    if (a)
      rp.delegate(*a, command_atom::value, c, by, text);
    else
      rp.deliver(work_reply{a.error(), {}, false});
  });
}

caf::result<work_reply> command(orchestrator_self self, const std::string& id, std::int32_t c,
                                const std::string& by, const std::string& text) {
  auto rp = self->make_response_promise<work_reply>();
  with_work(self, id, [self, rp, id, c, by, text](expected<work_actor> a) mutable {
    if (a) {
      rp.delegate(*a, command_atom::value, c, by, text);
      return;
    }
    auto& st = self->state;
    auto owner = st.elsewhere.find(id);
    if (owner == st.elsewhere.end()) {
      rp.deliver(work_reply{a.error(), {}, false});
      return;
    }
    const auto o = std::move(owner->second);
    st.elsewhere.erase(owner);
    command_elsewhere(
      self, st.calls, *st.env, o, {id, c, by, text},
      [rp](work_reply r) mutable { rp.deliver(std::move(r)); },
      [self, rp, id, c, by, text](std::vector<std::string> claimed) mutable {
        self->state.env->log->info("work {}: claimed with {} other open works of dead members "
                                   "to answer a command",
                                   id, claimed.size() - 1);
        command_here(self, rp, id, c, std::move(by), std::move(text));
      });
  });
  return rp;
}

/// A command another member forwarded (forward.hpp): run here, answered with its error only.
caf::result<forwarded_reply> forwarded(orchestrator_self self, const std::string& id,
                                       std::int32_t c, const std::string& by,
                                       const std::string& text) {
  auto rp = self->make_response_promise<forwarded_reply>();
  answer_forwarded(
    self, [self, id](std::function<void(expected<work_actor>)> f) { with_work(self, id, f); }, rp,
    {id, c, by, text});
  return rp;
}

/// A run a Work started ended: its Work hears of it.
void run_ended(orchestrator_self self, const std::string& run_id, const std::string& state,
               const std::string& outcome) {
  auto& st = self->state;
  auto i = st.run_to_work.find(run_id);
  if (i == st.run_to_work.end())
    return;
  auto id = i->second;
  st.run_to_work.erase(i);
  with_work(self, id, [self, run_id, state, outcome](expected<work_actor> a) {
    if (a)
      self->send(*a, run_ended_atom::value, run_id, state, outcome);
  });
}

orchestrator_impl_actor::behavior_type orchestrator_behavior(orchestrator_self self,
                                                             works_env_ptr env, event_hub* hub) {
  self->state.env = std::move(env);
  self->set_exit_handler([=](caf::exit_msg& msg) { on_exit(self, msg); });
  // A bug's exception ends the orchestrator with its message, which the supervisor records.
  self->set_exception_handler(exit_with_message);
  follow_run_ends(self, hub);
  recover(self);
  self->delayed_send(self, std::chrono::seconds(1), sweep_atom::value);
  return {
    [=](create_atom, const new_work& req) -> caf::result<work_reply> {
      if (self->state.recovering)
        return caf::skip;
      if (fault("works.orchestrator"))
        throw std::runtime_error("fault injected at works.orchestrator");
      return create(self, req);
    },
    [=](command_atom, const std::string& id, std::int32_t c, const std::string& by,
        const std::string& text) -> caf::result<work_reply> {
      if (self->state.recovering)
        return caf::skip;
      return command(self, id, c, by, text);
    },
    [=](forward_atom, const std::string& id, std::int32_t c, const std::string& by,
        const std::string& text) -> caf::result<forwarded_reply> {
      if (self->state.recovering)
        return caf::skip;
      return forwarded(self, id, c, by, text);
    },
    [=](run_ended_atom, const std::string& run_id, const std::string& state,
        const std::string& outcome) { run_ended(self, run_id, state, outcome); },
    [=](adopt_atom, const std::string& id) {
      // Claimed from a dead member: its actor arms its timer and follows its run.
      self->state.env->log->info("work {}: taken over from a dead member", id);
      with_work(self, id, [self, id](expected<work_actor> a) {
        if (a)
          self->send(*a, check_atom::value);
        else
          self->state.env->log->error("work {}: cannot take it over: {}", id, a.error().message);
      });
    },
    [=](watch_run_atom, const std::string& run_id, const std::string& work_id) {
      self->state.run_to_work[run_id] = work_id;
    },
    [=](schedule_atom, const std::string& id, std::int64_t at) { set_timer(self, id, at); },
    [=](timer_atom) { on_timer(self); },
    [=](sweep_atom) {
      auto& st = self->state;
      if (!st.recovering)
        return passivate_idle(self);
      if (st.recovery_failed) {
        st.recovery_failed = false;
        recover(self);
      }
      self->delayed_send(self, std::chrono::seconds(1), sweep_atom::value);
    },
    [=](called_atom, std::uint64_t token) { self->state.calls.complete(token); },
  };
}

} // namespace

orchestrator_actor spawn_orchestrator(caf::actor_system& sys, works_env_ptr env, event_hub& hub) {
  return sys.spawn(orchestrator_behavior, std::move(env), &hub);
}

orchestrator_actor spawn_orchestrator(caf::local_actor* parent, works_env_ptr env, event_hub& hub) {
  return parent->spawn<caf::linked>(orchestrator_behavior, std::move(env), &hub);
}

} // namespace sreh::actors
