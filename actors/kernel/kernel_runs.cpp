// Flow runs waiting for the runs a step of theirs started (a goal, another flow, the branches of
// a parallel block; docs/flows.md). The waiting run has no actor. Whenever one of its runs ends
// (or at start, or when the step's timeout passes) the kernel reads them from the store and, once
// their join is decided, respawns the flow run with their ends. Cancelling a waiting flow run
// cancels its runs.

#include <fmt/format.h>

#include "actors/kernel/kernel_state.hpp"
#include "actors/kernel/run/step_facts.hpp"
#include "core/flows/runner.hpp"

namespace sreh::actors {

namespace {

/// The runs of the last step of a waiting flow run, read from the store.
struct runs_view {
  std::optional<run> r; // none: not waiting for runs (gone, woken, cancelled)
  sreh::error err;
  std::vector<step> steps;
  std::vector<flows::child_end> ends;
  flows::join_mode join = flows::join_mode::all;
  bool single_goal = false;
  timestamp_us deadline = 0;
};

/// Blocking: on the store pool.
runs_view load_runs(persistence::run_store& s, const std::string& run_id) {
  runs_view v;
  auto r = s.get_run(run_id);
  if (!r || !r->has_value() || (*r)->state != run_state::waiting ||
      (*r)->waiting_for != wait_reason::runs)
    return v;
  auto steps = s.get_steps(run_id);
  if (!steps) {
    v.err = steps.error();
    v.r = std::move(**r);
    return v;
  }
  if (steps->empty() || steps->back().kind != step_kind::subruns ||
      steps->back().state != step_state::intent)
    return v;
  const auto& last = steps->back();
  auto wait = read_facts(last).runs.value_or(runs_wait{});
  v.join = wait.join;
  v.single_goal = wait.single_goal;
  if (wait.timeout_ms > 0)
    v.deadline = last.started_at + wait.timeout_ms * 1000;
  for (const auto& key : wait.keys) {
    flows::child_end e;
    e.key = key;
    auto id = s.find_by_idempotency_key(run_id + "/" + key);
    if (id && id->has_value()) {
      e.run_id = **id;
      auto child = s.get_run(e.run_id);
      if (child && child->has_value() && is_terminal((*child)->state)) {
        e.state = to_string((*child)->state);
        e.conclusion = (*child)->conclusion;
        e.error = (*child)->error;
      }
    }
    v.ends.push_back(std::move(e));
  }
  v.steps = std::move(*steps);
  v.r = std::move(**r);
  return v;
}

/// What waking a run on its durable timer needs: the run, still waiting for it, and its steps.
struct wake_view {
  std::optional<run> r; // none: cancelled or woken meanwhile
  sreh::error err;      // reading the steps failed
  std::vector<step> steps;
};

} // namespace

void check_runs(kernel_self self, const std::string& run_id, bool timed_out, bool arm) {
  with_run(self, run_id, [self, run_id, timed_out, arm] {
    if (self->state.runs.count(run_id) != 0)
      return release_run(self, run_id); // awake: it parks again, and that checks
    read_store(
      self, [run_id](persistence::run_store& s) { return load_runs(s, run_id); },
      [self, run_id, timed_out, arm](runs_view v) {
        auto& st = self->state;
        if (!v.r || st.runs.count(run_id) != 0)
          return release_run(self, run_id);
        if (v.err) {
          st.rt->log->error("flow run {}: cannot read the runs it waits for: {}", run_id,
                            v.err.message);
          return release_run(self, run_id);
        }
        auto res = flows::join(v.join, v.single_goal, v.ends);
        bool late = v.deadline != 0 && st.rt->clock.now_us() >= v.deadline;
        if (res.decided || (timed_out && late)) {
          st.rt->counters.parked.fetch_sub(1, std::memory_order_relaxed);
          self->send(activate(self, std::move(*v.r), std::move(v.steps)), runs_atom::value,
                     std::move(v.ends), !res.decided);
        } else if (arm && v.deadline != 0) {
          st.timers.emplace(v.deadline, "runs:" + run_id);
          arm_timer(self);
        }
        release_run(self, run_id);
      });
  });
}

void on_await(kernel_self self, const std::string& run_id) {
  // The run's actor is quitting: from now on the run counts as passivated.
  self->state.runs.erase(run_id);
  self->state.rt->counters.parked.fetch_add(1, std::memory_order_relaxed);
  check_runs(self, run_id, false, true);
}

void cancel_runs_of(kernel_self self, const std::string& run_id, const std::string& by) {
  read_store(
    self,
    [run_id](persistence::run_store& s) {
      std::vector<std::string> ids;
      auto steps = s.get_steps(run_id);
      if (!steps || steps->empty() || steps->back().kind != step_kind::subruns)
        return ids;
      auto wait = read_facts(steps->back()).runs.value_or(runs_wait{});
      for (const auto& key : wait.keys)
        if (auto id = s.find_by_idempotency_key(run_id + "/" + key); id && id->has_value())
          ids.push_back(**id);
      return ids;
    },
    [self, run_id, by](std::vector<std::string> ids) {
      auto me = caf::actor_cast<kernel_impl_actor>(self);
      for (const auto& id : ids)
        self
          ->request(me, caf::infinite, cancel_atom::value, id,
                    fmt::format("{} (flow run {} was cancelled)", by, run_id))
          .then([](kernel_reply&) {}, [](caf::error&) {});
    });
}

/// Respawns a run whose durable timer fired; the operation on the run ends when it is awake.
void wake_run(kernel_self self, const std::string& run_id) {
  read_store(
    self,
    [run_id](persistence::run_store& s) {
      wake_view w;
      auto r = s.get_run(run_id);
      if (!r || !r->has_value() || (*r)->state != run_state::waiting ||
          (*r)->waiting_for != wait_reason::timer)
        return w;
      auto steps = s.get_steps(run_id);
      if (steps)
        w.steps = std::move(*steps);
      else
        w.err = steps.error();
      w.r = std::move(**r);
      return w;
    },
    [self, run_id](wake_view w) {
      auto& st = self->state;
      if (!w.r || st.runs.count(run_id) != 0) {
        // cancelled or already awake meanwhile
      } else if (w.err) {
        st.rt->log->error("cannot wake run {}: {}", run_id, w.err.message);
      } else {
        st.rt->counters.parked.fetch_sub(1, std::memory_order_relaxed);
        self->send(activate(self, std::move(*w.r), std::move(w.steps)), timer_atom::value);
      }
      release_run(self, run_id);
    });
}

} // namespace sreh::actors
