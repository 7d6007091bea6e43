#include "kernel.hpp"

#include <fmt/format.h>

#include <unordered_map>

#include "run_actor.hpp"
#include "sreh/core/json.hpp"

namespace sreh::actors {

namespace {

/// A kernel write waiting for its commit: the cancellation of a passivated run.
struct pending_write {
  caf::typed_response_promise<kernel_reply> rp;
  run r;
};

struct kernel_state {
  runtime_ptr rt;
  std::unordered_map<std::string, run_actor> runs;
  std::unordered_map<caf::actor_addr, std::string> ids_by_addr;
  std::unordered_map<std::uint64_t, pending_write> pending;
  std::unordered_map<std::string, int> crashes; // per run, to stop a crash loop
  std::uint64_t tokens = 0;
  static inline const char* name = "sreh.kernel";
};

using self_ptr = kernel_impl_actor::stateful_pointer<kernel_state>;

constexpr int max_run_crashes = 3;

run_actor activate(self_ptr self, run r, std::vector<step> steps) {
  auto& st = self->state;
  auto id = r.id;
  auto a = spawn_run(self, st.rt, std::move(r), std::move(steps));
  st.ids_by_addr[a.address()] = id;
  st.runs[id] = a;
  st.rt->counters.active.fetch_add(1, std::memory_order_relaxed);
  return a;
}

/// Loads a run and its steps from the store and resumes it (at start, or after a crash).
bool recover_run(self_ptr self, const run& r) {
  auto& st = self->state;
  auto steps = st.rt->store.get_steps(r.id);
  if (!steps) {
    st.rt->log->error("recovery of run {}: cannot read its steps: {}", r.id, steps.error().message);
    return false;
  }
  self->send(activate(self, r, std::move(*steps)), recover_atom::value);
  return true;
}

void recover_all(self_ptr self) {
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
      continue;
    }
    if (st.runs.count(r.id) == 0 && recover_run(self, r))
      ++resumed;
  }
  st.rt->log->info("recovery: {} unfinished runs resumed, {} waiting runs left parked", resumed,
                   parked);
}

void submit_write(self_ptr self, persistence::write_batch b, pending_write p) {
  auto& st = self->state;
  auto token = ++st.tokens;
  st.pending.emplace(token, std::move(p));
  auto handle = kernel_impl_actor{self};
  st.rt->writer.submit(std::move(b), [handle, token](persistence::commit_result res) {
    caf::anon_send(handle, kernel_committed_atom::value, token, static_cast<int>(res.err.code),
                   std::move(res.err.message), std::move(res.existing_run_id));
  });
}

event make_event(const runtime& rt, const run& r, std::int64_t run_seq, const char* kind,
                 std::string data) {
  event e;
  e.id = rt.ids.next("evt");
  e.run_id = r.id;
  e.run_seq = run_seq;
  e.kind = kind;
  e.at = rt.clock.now_us();
  e.data = std::move(data);
  return e;
}

caf::result<kernel_reply> submit(self_ptr self, goal_request& req) {
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

/// Cancels a run that has no actor: waiting (passivated) or unknown here.
caf::result<kernel_reply> cancel_parked(self_ptr self, const std::string& id, const std::string& by) {
  auto& rt = *self->state.rt;
  auto found = rt.store.get_run(id);
  if (!found)
    return reply_error(errc::unavailable, found.error().message);
  if (!found->has_value())
    return reply_error(errc::not_found, fmt::format("no run with id '{}'", id));
  run r = std::move(**found);
  if (is_terminal(r.state))
    return reply_error(errc::conflict, fmt::format("run {} has already ended ({})", id,
                                                   to_string(r.state)));
  auto doc = json::parse(r.checkpoint);
  std::int64_t seq = 0;
  if (doc && doc->IsObject() && doc->HasMember("run_seq") && (*doc)["run_seq"].IsInt64())
    seq = (*doc)["run_seq"].GetInt64();
  r.state = run_state::cancelled;
  r.waiting_for = wait_reason::none;
  r.error = "cancelled by " + by;
  r.updated_at = rt.clock.now_us();
  r.checkpoint = fmt::format(R"({{"run_seq":{}}})", seq + 1);
  persistence::write_batch b;
  b.events.push_back(make_event(rt, r, seq + 1, "run.cancelled",
                                fmt::format(R"({{"message":{},"steps":{}}})",
                                            json::quote(r.error), r.steps)));
  b.update = r;
  auto rp = self->make_response_promise<kernel_reply>();
  submit_write(self, std::move(b), pending_write{rp, std::move(r)});
  return rp;
}

void on_committed(self_ptr self, std::uint64_t token, int code, std::string& msg) {
  auto& st = self->state;
  auto i = st.pending.find(token);
  if (i == st.pending.end())
    return;
  auto p = std::move(i->second);
  st.pending.erase(i);
  if (code != 0) {
    p.rp.deliver(reply_error(static_cast<errc>(code), std::move(msg)));
    return;
  }
  kernel_reply rep;
  rep.state = static_cast<int>(p.r.state);
  rep.run_id = p.r.id;
  p.rp.deliver(std::move(rep));
}

void on_run_exit(self_ptr self, const caf::exit_msg& msg) {
  auto& st = self->state;
  auto i = st.ids_by_addr.find(msg.source);
  if (i == st.ids_by_addr.end()) {
    self->quit(msg.reason); // our supervisor is shutting down or died
    return;
  }
  auto id = std::move(i->second);
  st.ids_by_addr.erase(i);
  st.runs.erase(id);
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
  if (r && r->has_value() && !is_terminal((*r)->state))
    recover_run(self, **r);
}

kernel_impl_actor::behavior_type kernel_behavior(self_ptr self, runtime_ptr rt) {
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
    [=](kernel_committed_atom, std::uint64_t token, int code, std::string& msg,
        std::string&) { on_committed(self, token, code, msg); },
  };
}

} // namespace

kernel_impl_actor spawn_kernel(caf::local_actor* parent, runtime_ptr rt) {
  return parent->spawn<caf::linked>(kernel_behavior, std::move(rt));
}

} // namespace sreh::actors
