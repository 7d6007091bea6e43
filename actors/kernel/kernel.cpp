#include <fmt/format.h>

#include "actors/kernel/kernel_state.hpp"
#include "core/base/json.hpp"

namespace sreh::actors {

namespace {

constexpr int max_run_crashes = 3;

/// Loads a run and its steps from the store and resumes it (at start, or after a crash).
bool recover_run(kernel_self self, const run& r) {
  auto& st = self->state;
  auto steps = st.rt->store.get_steps(r.id);
  if (!steps) {
    st.rt->log->error("recovery of run {}: cannot read its steps: {}", r.id, steps.error().message);
    return false;
  }
  self->send(activate(self, r, std::move(*steps)), recover_atom::value);
  return true;
}

void recover_all(kernel_self self) {
  auto& st = self->state;
  auto runs = st.rt->store.unfinished_runs(st.rt->cfg.node_id);
  if (!runs) {
    st.rt->log->error("recovery: cannot list unfinished runs: {}", runs.error().message);
    return;
  }
  std::size_t resumed = 0, parked = 0;
  for (auto& r : *runs) {
    if (r.state == run_state::waiting) {
      ++parked; // passivated: woken by the decision it waits for
      recover_parked(self, r);
      continue;
    }
    if (st.runs.count(r.id) == 0 && recover_run(self, r))
      ++resumed;
  }
  st.rt->log->info("recovery: {} unfinished runs resumed, {} waiting runs parked", resumed,
                   parked);
}

/// Resumes a run this node has just claimed from a dead node (cluster membership).
void adopt(kernel_self self, const std::string& run_id) {
  auto& st = self->state;
  if (st.runs.count(run_id) != 0)
    return;
  auto r = st.rt->store.get_run(run_id);
  if (!r || !r->has_value()) {
    st.rt->log->error("claimed run {}: cannot read it: {}", run_id,
                      r ? "no such run" : r.error().message);
    return;
  }
  const auto& run = **r;
  if (run.node_id != st.rt->cfg.node_id || is_terminal(run.state))
    return; // claimed again by another node, or finished meanwhile
  if (run.state == run_state::waiting)
    recover_parked(self, run);
  else
    recover_run(self, run);
}

caf::result<kernel_reply> submit(kernel_self self, goal_request& req) {
  auto& rt = *self->state.rt;
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
  if (r.budget.deadline_us > 0) // the request gives it relative to now
    r.budget.deadline_us += now;
  // The actor exists (and takes cancels) from now on; it answers the submitter once the run
  // is durable.
  auto a = activate(self, std::move(r), {});
  return self->delegate(a, create_atom::value);
}

void on_committed(kernel_self self, std::uint64_t token, int code, std::string& msg) {
  auto& st = self->state;
  auto i = st.pending.find(token);
  if (i == st.pending.end())
    return;
  auto then = std::move(i->second);
  st.pending.erase(i);
  then(code == 0 ? sreh::error{} : sreh::error{static_cast<errc>(code), std::move(msg)});
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
  auto r = st.rt->store.get_run(id);
  if (r && r->has_value() && (*r)->state == run_state::running)
    recover_run(self, **r);
}

kernel_impl_actor::behavior_type kernel_behavior(kernel_self self, runtime_ptr rt) {
  self->state.rt = std::move(rt);
  self->set_exit_handler([=](caf::exit_msg& msg) { on_run_exit(self, msg); });
  recover_all(self);
  self->state.rt->ready = true;
  return {
    [=](submit_atom, goal_request& req) -> caf::result<kernel_reply> { return submit(self, req); },
    [=](cancel_atom, const std::string& id, const std::string& by) -> caf::result<kernel_reply> {
      auto i = self->state.runs.find(id);
      if (i != self->state.runs.end())
        return self->delegate(i->second, cancel_atom::value, id, by);
      return cancel_parked(self, id, by);
    },
    [=](decide_atom, const std::string& id, const approval_vote& vote) {
      return decide(self, id, vote);
    },
    [=](kernel_committed_atom, std::uint64_t token, int code, std::string& msg, std::string&) {
      on_committed(self, token, code, msg);
    },
    [=](parked_atom, const std::string& run_id, const std::string& approval_id,
        std::int64_t until) { on_parked(self, run_id, approval_id, until); },
    [=](timer_atom) { on_timer(self); },
    [=](adopt_atom, const std::string& run_id) { adopt(self, run_id); },
  };
}

} // namespace

run_actor activate(kernel_self self, run r, std::vector<step> steps) {
  auto& st = self->state;
  auto id = r.id;
  auto a = spawn_run(self, kernel_impl_actor{self}, st.rt, std::move(r), std::move(steps));
  st.ids_by_addr[a.address()] = id;
  st.runs[id] = a;
  st.rt->counters.active.fetch_add(1, std::memory_order_relaxed);
  return a;
}

void kernel_commit(kernel_self self, persistence::write_batch b,
                   std::function<void(const sreh::error&)> then) {
  auto& st = self->state;
  auto token = ++st.tokens;
  st.pending.emplace(token, std::move(then));
  auto handle = kernel_impl_actor{self};
  st.rt->writer.submit(std::move(b), [handle, token](persistence::commit_result res) {
    caf::anon_send(handle, kernel_committed_atom::value, token, static_cast<int>(res.err.code),
                   std::move(res.err.message), std::move(res.existing_run_id));
  });
}

event parked_event(const runtime& rt, run& r, const char* kind, std::string data) {
  std::int64_t seq = 0;
  auto doc = json::parse(r.checkpoint);
  if (doc && doc->IsObject() && doc->HasMember("run_seq") && (*doc)["run_seq"].IsInt64())
    seq = (*doc)["run_seq"].GetInt64();
  r.checkpoint = fmt::format(R"({{"run_seq":{}}})", seq + 1);
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

kernel_impl_actor spawn_kernel(caf::local_actor* parent, runtime_ptr rt) {
  return parent->spawn<caf::linked>(kernel_behavior, std::move(rt));
}

} // namespace sreh::actors
