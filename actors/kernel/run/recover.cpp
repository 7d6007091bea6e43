// A run actor's recovery after a restart: the journal's last step decides how the run goes on
// (an intent without an outcome is reconciled with the tool before anything runs again).

#include <fmt/format.h>

#include <functional>
#include <optional>
#include <stop_token>

#include "actors/kernel/run/actor_impl.hpp"
#include "actors/kernel/run/journal.hpp"
#include "actors/policy/policy_check.hpp"
#include "core/base/failpoint.hpp"
#include "core/base/json.hpp"
#include "core/base/json_object.hpp"
#include "core/model/outcome.hpp"

namespace sreh::actors {

namespace run_impl {

/// Resumes a run found unfinished at start: decide what its last step's intent means.
void recover(self_ptr self) {
  auto& st = self->state;
  auto& j = st.journal;
  st.rt->counters.recovered.fetch_add(1, std::memory_order_relaxed);
  j.emit("run.recovered", json::object("node", st.rt->cfg.node_id, "steps", j.steps.size()));
  if (j.r.state == run_state::pending) {
    j.start();
    return advance(self);
  }
  if (j.steps.empty() || j.steps.back().state != step_state::intent)
    return advance(self);
  auto& s = j.steps.back();
  if (s.kind == step_kind::subruns) // submitting them again finds the ones that exist (their keys)
    return start_runs(self);
  if (s.kind == step_kind::reason) { // a model call without its answer: call again
    ++s.attempts;
    return advance(self);
  }
  auto t = st.rt->tools.find(s.tool);
  if (s.kind != step_kind::tool || !t || t->idempotent()) {
    // Read-only (or unknown) work is safe to repeat: run the step again.
    ++s.attempts;
    return execute(self);
  }
  auto n = s.n;
  auto key = s.idempotency_key;
  if (!t->blocking()) {
    auto rr = t->reconcile(key);
    return on_reconciled(self, n, rr.state, std::move(rr.result));
  }
  auto handle = run_actor{self};
  st.rt->pool.post([handle, t, key, n] {
    reconcile_result rr;
    try {
      rr = t->reconcile(key);
    } catch (const std::exception&) {
      rr.state = reconcile_result::unknown;
    }
    caf::anon_send(handle, reconciled_atom::value, n, rr.state, std::move(rr.result));
  });
}

void on_reconciled(self_ptr self, std::int64_t n, reconcile_result::status status,
                   std::string result) {
  auto& st = self->state;
  auto& s = st.journal.steps.back();
  if (s.n != n)
    return;
  switch (status) {
  case reconcile_result::happened:
    st.rt->log->info("run {} step {}: reconciled, the call took effect before the crash",
                     st.journal.r.id, n);
    return on_tool_done(self, n, true, std::move(result), {});
  case reconcile_result::not_happened:
    st.rt->log->info("run {} step {}: reconciled, the call did not take effect; executing",
                     st.journal.r.id, n);
    ++s.attempts;
    return execute(self);
  case reconcile_result::unknown:
    st.rt->log->warn("run {} step {}: in doubt, waiting for a human", st.journal.r.id, n);
    st.parked_on = st.journal.mark_in_doubt(n);
    return commit(self, after_commit::park);
  }
}

} // namespace run_impl

} // namespace sreh::actors
