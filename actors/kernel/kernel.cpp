#include <fmt/format.h>

#include <stdexcept>

#include "actors/evolve/versions.hpp"
#include "actors/kernel/kernel_state.hpp"
#include "actors/kernel/run/step_facts.hpp"
#include "actors/runtime/supervisor.hpp"
#include "core/base/fault.hpp"
#include "core/base/json.hpp"
#include "core/base/json_object.hpp"
#include "core/base/text.hpp"
#include "core/conversation/message.hpp"

namespace sreh::actors {

namespace {

constexpr int max_run_crashes = 3;
/// Unfinished runs whose details one store-pool job reads at start (bounds what is in memory).
constexpr std::size_t recovery_chunk = 256;

/// What the recovery at start has done so far.
struct recovery_progress {
  std::vector<run> runs; // unfinished runs of this node, oldest first
  std::size_t next = 0;  // the first one not yet read
  std::size_t resumed = 0;
  std::size_t parked = 0;
};

void recovery_done(kernel_self self, const recovery_progress& p) {
  auto& st = self->state;
  st.rt->log->info("recovery: {} unfinished runs resumed, {} waiting runs parked", p.resumed,
                   p.parked);
  st.recovering = false;
  st.rt->ready = true;
  consider_inbox(self);
}

/// Reads the next chunk of unfinished runs and resumes (or parks) them, in order.
void recover_chunk(kernel_self self, std::shared_ptr<recovery_progress> p) {
  if (p->next >= p->runs.size())
    return recovery_done(self, *p);
  const auto end = std::min(p->runs.size(), p->next + recovery_chunk);
  std::vector<run> chunk(std::make_move_iterator(p->runs.begin() + p->next),
                         std::make_move_iterator(p->runs.begin() + end));
  p->next = end;
  read_store(
    self,
    [chunk = std::move(chunk)](persistence::store& s) mutable {
      std::vector<recovery_item> items;
      items.reserve(chunk.size());
      for (auto& r : chunk)
        items.push_back(load_recovery(s, std::move(r)));
      return items;
    },
    [self, p](std::vector<recovery_item> items) {
      for (auto& item : items) {
        if (item.r.state == run_state::waiting) {
          ++p->parked; // passivated: woken by the decision it waits for
          recover_parked(self, item);
          continue;
        }
        if (self->state.runs.count(item.r.id) == 0 && recover_active(self, item))
          ++p->resumed;
      }
      recover_chunk(self, p);
    });
}

void recover_all(kernel_self self) {
  const auto node_id = self->state.rt->cfg.node_id;
  read_store(
    self, [node_id](persistence::run_store& s) { return s.unfinished_runs(node_id); },
    [self](expected<std::vector<run>> runs) {
      if (!runs) {
        self->state.rt->log->error("recovery: cannot list unfinished runs: {}",
                                   runs.error().message);
        self->state.recovering = false;
        self->state.rt->ready = true;
        return;
      }
      auto p = std::make_shared<recovery_progress>();
      p->runs = std::move(*runs);
      load_inbox(self, [self, p] { recover_chunk(self, p); });
    });
}

/// A claimed run that is parked (on an approval, a timer or its runs) has no actor to say that
/// it moved: the kernel writes its run.recovered, naming this node, then parks it here as the
/// recovery at start does. The caller's operation on the run ends here.
void adopt_parked(kernel_self self, recovery_item item) {
  auto& rt = *self->state.rt;
  const auto before = item.r; // its checkpoint, should the event not be written
  persistence::write_batch b;
  b.events.push_back(parked_event(rt, item.r, "run.recovered",
                                  json::object("node", rt.cfg.node_id, "steps", item.r.steps)));
  b.update = item.r;
  auto id = item.r.id;
  kernel_commit(self, std::move(b),
                [self, item = std::move(item), before, id](const sreh::error& err) mutable {
                  auto& st = self->state;
                  if (err && err.code == errc::conflict) { // claimed again meanwhile
                    st.rt->log->warn("claimed run {}: {}", id, err.message);
                    return release_run(self, id);
                  }
                  if (err) {
                    st.rt->log->error("claimed run {}: cannot record run.recovered ({}); it "
                                      "stays parked here",
                                      id, err.message);
                    item.r = before;
                  } else {
                    st.rt->counters.recovered.fetch_add(1, std::memory_order_relaxed);
                  }
                  recover_parked(self, item);
                  release_run(self, id);
                });
}

/// Resumes a run this node has just claimed from a dead node (cluster membership).
void adopt(kernel_self self, const std::string& run_id) {
  if (self->state.runs.count(run_id) != 0)
    return;
  with_run(self, run_id, [self, run_id] {
    const auto node_id = self->state.rt->cfg.node_id;
    read_store(
      self,
      [run_id, node_id](persistence::store& s) -> expected<std::optional<recovery_item>> {
        auto r = s.get_run(run_id);
        if (!r)
          return r.error();
        if (!r->has_value() || (*r)->node_id != node_id || is_terminal((*r)->state))
          return std::optional<recovery_item>{}; // gone, claimed again, or finished meanwhile
        return std::optional<recovery_item>{load_recovery(s, std::move(**r))};
      },
      [self, run_id](expected<std::optional<recovery_item>> item) {
        auto& st = self->state;
        if (!item)
          st.rt->log->error("claimed run {}: cannot read it: {}", run_id, item.error().message);
        else if (*item && st.runs.count(run_id) == 0) {
          if ((*item)->r.state == run_state::waiting)
            return adopt_parked(self, std::move(**item));
          recover_active(self, **item);
        }
        release_run(self, run_id);
      });
  });
}

caf::result<kernel_reply> submit(kernel_self self, goal_request& req) {
  auto& rt = *self->state.rt;
  if (auto full = admission(rt))
    return reply_error(full.code, std::move(full.message));
  auto now = rt.clock.now_us();
  run r;
  r.id = rt.ids.next("run");
  r.goal = std::move(req.goal);
  r.submitter = std::move(req.submitter);
  r.idempotency_key = std::move(req.idempotency_key);
  r.labels = req.labels.empty() ? "{}" : std::move(req.labels);
  r.node_id = rt.cfg.node_id;
  r.created_at = r.updated_at = now;
  r.budget = req.budget;
  r.kind = std::move(req.kind);
  r.parent = std::move(req.parent);
  r.spec = std::move(req.spec);
  if (r.kind == "goal" && rt.versions) // it decides with today's versions to its end
    r.spec = rt.versions->pin(r.spec);
  if (r.budget.deadline_us > 0) // the request gives it relative to now
    r.budget.deadline_us += now;
  // What was said to it before it began: its actor commits these with it (run/actor.cpp).
  if (!req.opening.empty()) {
    auto& opening = self->state.inbox[r.id];
    for (auto& o : req.opening) {
      conversation::message m;
      m.id = rt.ids.next("msg");
      m.run_id = r.id;
      m.seq = std::ssize(opening) + 1;
      m.author = std::move(o.author);
      m.text = std::string{utf8_prefix(o.text, conversation::max_text_bytes)};
      m.at = now;
      opening.push_back(std::move(m));
    }
  }
  // The actor exists (and takes cancels) from now on; it answers the submitter once the run
  // is durable.
  auto a = activate(self, std::move(r), {});
  return self->delegate(a, create_atom::value);
}

/// A run actor crashed: resume the run from the store, if it is still running.
void recover_crashed(kernel_self self, const std::string& id) {
  with_run(self, id, [self, id] {
    read_store(
      self,
      [id](persistence::store& s) -> std::optional<recovery_item> {
        // Pending too: an actor that died between the run's creation and its first step.
        auto r = s.get_run(id);
        if (!r || !r->has_value() ||
            ((*r)->state != run_state::running && (*r)->state != run_state::pending))
          return std::nullopt;
        return load_recovery(s, std::move(**r));
      },
      [self, id](std::optional<recovery_item> item) {
        if (item && self->state.runs.count(id) == 0)
          recover_active(self, *item);
        release_run(self, id);
      });
  });
}

void on_run_exit(kernel_self self, const caf::exit_msg& msg) {
  auto& st = self->state;
  auto i = st.ids_by_addr.find(msg.source);
  if (i == st.ids_by_addr.end()) {
    self->quit(msg.reason); // our supervisor is shutting down or died
    return;
  }
  auto id = std::move(i->second);
  st.ids_by_addr.erase(i);
  // A parked run may have been woken (a new actor) before its old actor's exit arrived.
  if (auto r = st.runs.find(id); r != st.runs.end() && r->second.address() == msg.source)
    st.runs.erase(r);
  st.rt->counters.active.fetch_sub(1, std::memory_order_relaxed);
  if (msg.reason == caf::exit_reason::normal)
    return;
  // The actor crashed; the store has everything it committed. Resume from there, a few times.
  auto n = ++st.crashes[id];
  st.rt->log->error("run {} actor died ({}); {}", id, caf::to_string(msg.reason),
                    n <= max_run_crashes ? "recovering it from the store" : "giving up on it");
  if (n > max_run_crashes)
    return;
  recover_crashed(self, id);
}

kernel_impl_actor::behavior_type kernel_behavior(kernel_self self, runtime_ptr rt) {
  self->state.rt = std::move(rt);
  self->set_exit_handler([=](caf::exit_msg& msg) { on_run_exit(self, msg); });
  // A bug's exception ends the kernel with its message (its runs' actors go with it); the
  // supervisor records it and starts a kernel that recovers them.
  self->set_exception_handler(exit_with_message);
  recover_all(self);
  return {
    [=](submit_atom, goal_request& req) -> caf::result<kernel_reply> {
      if (self->state.recovering)
        return caf::skip;
      if (fault("kernel.submit"))
        throw std::runtime_error("fault injected at kernel.submit");
      return submit(self, req);
    },
    [=](cancel_atom, const std::string& id, const std::string& by) -> caf::result<kernel_reply> {
      if (self->state.recovering)
        return caf::skip;
      auto i = self->state.runs.find(id);
      if (i == self->state.runs.end())
        return cancel_parked(self, id, by);
      // Its actor cancels it. One that stopped before it answered (it parked on an approval or
      // ended just then) leaves the run to be cancelled as the store has it.
      auto rp = self->make_response_promise<kernel_reply>();
      self->request(i->second, caf::infinite, cancel_atom::value, id, by)
        .then([rp](kernel_reply& rep) mutable { rp.deliver(std::move(rep)); },
              [self, id, by, rp](caf::error&) mutable { cancel_stored(self, id, by, rp); });
      return rp;
    },
    [=](decide_atom, const std::string& id,
        const approval_vote& vote) -> caf::result<kernel_reply> {
      if (self->state.recovering)
        return caf::skip;
      return decide(self, id, vote);
    },
    [=](fork_atom, journal::fork_request& req) -> caf::result<kernel_reply> {
      if (self->state.recovering)
        return caf::skip;
      return fork_run(self, req);
    },
    [=](say_atom, conversation::message& m) -> caf::result<kernel_reply> {
      if (self->state.recovering)
        return caf::skip;
      return say(self, std::move(m));
    },
    [=](called_atom, std::uint64_t token) { self->state.calls.complete(token); },
    [=](parked_atom, const std::string& run_id, const std::string& approval_id,
        std::int64_t until) { on_parked(self, run_id, approval_id, until); },
    [=](timer_atom) { on_timer(self); },
    [=](await_atom, const std::string& run_id) { on_await(self, run_id); },
    [=](ended_atom, const std::string& parent) { check_runs(self, parent, false, false); },
    [=](adopt_atom, const std::string& run_id) -> caf::result<void> {
      if (self->state.recovering)
        return caf::skip;
      adopt(self, run_id);
      return caf::unit;
    },
  };
}

} // namespace

sreh::error admission(const runtime& rt) {
  // A store slower than the load shows as commits queueing for the writer. New runs wait
  // outside (503, Retry-After) rather than as memory; the runs under way go on.
  if (auto waiting = rt.writer.backlog();
      waiting > static_cast<std::size_t>(rt.cfg.limits.max_commit_backlog))
    return {errc::unavailable, fmt::format("the node is overloaded: {} commits wait for the store "
                                           "(limits.max_commit_backlog {}); retry shortly",
                                           waiting, rt.cfg.limits.max_commit_backlog)};
  return {};
}

recovery_item load_recovery(persistence::store& s, run r) {
  recovery_item item{std::move(r), {}, {}, {}, {}};
  const auto& id = item.r.id;
  if (item.r.state != run_state::waiting) {
    auto steps = s.get_steps(id);
    if (steps)
      item.steps = std::move(*steps);
    else
      item.err = steps.error();
  } else if (item.r.waiting_for == wait_reason::timer) {
    auto steps = s.get_steps(id);
    if (steps && !steps->empty() && steps->back().kind == step_kind::timer)
      item.timer_until = read_facts(steps->back()).until;
  } else {
    auto a = s.approval_for_step(id, item.r.steps);
    if (a && a->has_value()) {
      item.parked_on = std::move(**a);
      if (item.parked_on->state != approval_state::pending) { // settled: the run resumes
        auto steps = s.get_steps(id);
        if (steps)
          item.steps = std::move(*steps);
        else
          item.err = steps.error();
      }
    }
  }
  return item;
}

bool recover_active(kernel_self self, recovery_item& item) {
  if (item.err) {
    self->state.rt->log->error("recovery of run {}: cannot read its steps: {}", item.r.id,
                               item.err.message);
    return false;
  }
  self->send(activate(self, std::move(item.r), std::move(item.steps)), recover_atom::value);
  return true;
}

run_actor activate(kernel_self self, run r, std::vector<step> steps) {
  auto& st = self->state;
  auto id = r.id;
  auto a = spawn_run(self, kernel_impl_actor{self}, st.rt, std::move(r), std::move(steps));
  st.ids_by_addr[a.address()] = id;
  st.runs[id] = a;
  st.rt->counters.active.fetch_add(1, std::memory_order_relaxed);
  if (!st.inbox.empty())
    hand_inbox(self, id, a);
  return a;
}

void kernel_commit(kernel_self self, persistence::write_batch b,
                   std::function<void(const sreh::error&)> then) {
  commit_batch(kernel_impl_actor{self}, self->state.calls, self->state.rt->writer, std::move(b),
               [then = std::move(then)](persistence::commit_result res) { then(res.err); });
}

event parked_event(const runtime& rt, run& r, const char* kind, std::string data) {
  auto seq = run_seq_of_checkpoint(r.checkpoint);
  // An event while parked: the next run_seq, and the cost of the run's model calls kept.
  r.checkpoint = checkpoint_of(seq + 1, cost_of_checkpoint(r.checkpoint));
  r.updated_at = rt.clock.now_us();
  event e;
  e.id = rt.ids.next("evt");
  e.run_id = r.id;
  e.run_seq = seq + 1;
  e.kind = kind;
  e.at = r.updated_at;
  e.data = std::move(data);
  return e;
}

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

kernel_impl_actor spawn_kernel(caf::local_actor* parent, runtime_ptr rt) {
  return parent->spawn<caf::linked>(kernel_behavior, std::move(rt));
}

} // namespace sreh::actors
