// The action runtime's checks after an action: a tool's declared post-condition is evaluated
// (after a durable timer when it asks for a delay), and when it does not hold the action is
// compensated where the tool can undo it. Every check and undo is a journaled step.

#include <fmt/format.h>

#include "actors/kernel/run/actor_impl.hpp"
#include "core/base/json.hpp"
#include "core/base/json_object.hpp"

namespace sreh::actors::run_impl {

namespace {

/// The post-condition of step n was evaluated: journals the observation; compensates when it
/// does not hold.
void on_checked(self_ptr self, std::int64_t n, const actors::tool& t,
                const std::string& description, check_result res) {
  auto& st = self->state;
  // Copies: adding the observation step below may move the journal's steps.
  auto tool_name = st.journal.steps.at(static_cast<std::size_t>(n - 1)).tool;
  auto args = st.journal.steps.at(static_cast<std::size_t>(n - 1)).args;
  st.journal.add_observation(n, res.holds, res.detail, description);
  if (res.holds || !t.compensable())
    return advance(self);
  st.rt->log->warn("run {} step {}: post-condition '{}' does not hold; compensating",
                   st.journal.r.id, n, description);
  decision d;
  d.kind = decision::call_tool;
  d.tool = std::move(tool_name);
  d.args = std::move(args);
  d.thought = fmt::format("the effect of step {} did not hold ({}): undoing it", n, description);
  d.detail = json::object("compensates", n);
  propose(self, d); // an undo is an action too: policy decides on it like on any other
}

/// Evaluates the post-condition of step n now (on the tool pool when the tool blocks).
void verify_now(self_ptr self, std::int64_t n, tool_ptr t, const std::string& description) {
  auto& st = self->state;
  auto check = [t, args = st.journal.steps.at(static_cast<std::size_t>(n - 1)).args] {
    check_result res;
    try {
      res = t->check(args);
    } catch (const std::exception& e) {
      res = {false, json::object("error", e.what())};
    }
    return res;
  };
  if (!t->blocking())
    return on_checked(self, n, *t, description, check());
  call_on(self, st.rt->pool, std::move(check), [self, n, t, description](check_result res) {
    on_checked(self, n, *t, description, std::move(res));
  });
}

} // namespace

void after_success(self_ptr self, std::int64_t n) {
  auto& st = self->state;
  const auto& s = st.journal.steps.at(static_cast<std::size_t>(n - 1));
  auto undo = st.journal.facts(n).compensates > 0;
  auto t = s.kind == step_kind::tool && !undo ? st.rt->tools.find(s.tool) : nullptr;
  auto pc = t ? t->postcondition_for(s.args) : std::nullopt;
  if (!pc)
    return advance(self);
  if (pc->after_ms <= 0)
    return verify_now(self, n, t, pc->description);
  // Wait durably: the run parks on a timer step; the kernel respawns it when the time comes.
  st.journal.add_timer(n, st.rt->clock.now_us() + pc->after_ms * 1000, pc->description);
  commit(self, after_commit::park_timer);
}

void on_timer_fired(self_ptr self) {
  auto& st = self->state;
  auto& j = st.journal;
  if (j.steps.empty() || j.steps.back().kind != step_kind::timer ||
      j.steps.back().state != step_state::intent) {
    st.rt->log->error("run {}: woken for a timer it does not wait for", j.r.id);
    return self->quit();
  }
  auto n = j.timer_fired();
  if (n <= 0) // a flow's timer (a wait, a retry's backoff): the flow goes on
    return advance(self);
  auto description = j.facts(j.steps.back()).check;
  const auto& s = j.steps.at(static_cast<std::size_t>(n - 1));
  auto t = st.rt->tools.find(s.tool);
  if (!t)
    return advance(self);
  verify_now(self, n, t, description);
}

} // namespace sreh::actors::run_impl
