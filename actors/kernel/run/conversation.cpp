// A run takes what people said to it (docs/conversation.md): the kernel delivers each committed
// message to the run's actor, which keeps it until its next decision, then journals a `message`
// step for it (marked taken in the same batch: exactly once, whatever crashes between). A
// constraint ("do not touch X") becomes a rule of the run's own policy that denies every
// mutating action on X, so no reasoner can ignore it; "stop" ends the run; "pause" holds it
// (durably: the pause is read back from its journal) until "resume".

#include <fmt/format.h>

#include <algorithm>
#include <variant>

#include "actors/kernel/run/actor_impl.hpp"
#include "actors/kernel/run/journal.hpp"
#include "core/conversation/answer.hpp"
#include "core/conversation/steering.hpp"

namespace sreh::actors {

namespace run_impl {

std::vector<conversation::known_entity> known_entities(const std::vector<step>& steps,
                                                       const tool_registry& tools) {
  std::vector<conversation::known_entity> out;
  auto add = [&](const obs::entity_ref& e) {
    if (e.name.empty())
      return;
    for (auto& [name, kind] : out)
      if (name == e.name) {
        if (kind.empty())
          kind = e.kind;
        return;
      }
    out.emplace_back(e.name, e.kind);
  };
  for (const auto& s : steps) {
    if (s.kind != step_kind::tool || s.state != step_state::succeeded)
      continue;
    for (const auto& o : tools.observations_of(s)) {
      if (const auto* t = std::get_if<obs::topology>(&o))
        for (const auto& e : t->entities)
          add(e);
      else if (const auto* m = std::get_if<obs::metric_sample>(&o))
        add(m->entity);
    }
  }
  return out;
}

void refresh_steering(run_state_t& st) {
  st.pause = conversation::pause_of(st.journal.steps);
  auto all = conversation::constraints_of(st.journal.steps);
  if (all.empty()) {
    st.constrained_policy.reset();
    return;
  }
  auto p = std::make_shared<policy::policy_set>(st.own_policy ? *st.own_policy : st.rt->policy);
  std::vector<policy::rule> rules;
  for (const auto& c : all) {
    policy::rule r;
    r.id = "constraint:" + c.message_id;
    r.description = "set on this run by a message";
    r.targets = {c.entity};
    r.risks = {"low", "medium", "high"}; // every mutating action
    r.effect = policy::verdict::deny;
    r.reason = conversation::describe(c);
    rules.push_back(std::move(r));
  }
  p->rules.insert(p->rules.begin(), rules.begin(), rules.end());
  p->version += fmt::format("+{}constraints", all.size());
  st.constrained_policy = std::move(p);
}

event message_event(const runtime& rt, const conversation::message& m) {
  event e;
  e.id = rt.ids.next("evt");
  e.run_id = m.run_id;
  e.kind = "run.message";
  e.at = m.at;
  e.data = conversation::to_json(m);
  return e;
}

void on_messages(self_ptr self, std::vector<conversation::message> ms) {
  auto& st = self->state;
  const auto taken = st.journal.last_taken_seq();
  for (auto& m : ms) {
    bool known = m.seq <= taken || std::any_of(st.inbox.begin(), st.inbox.end(),
                                               [&](const auto& x) { return x.seq == m.seq; });
    if (!known)
      st.inbox.push_back(std::move(m));
  }
  std::sort(st.inbox.begin(), st.inbox.end(),
            [](const auto& a, const auto& b) { return a.seq < b.seq; });
  if (!st.inbox.empty())
    wake(self);
}

void hold(self_ptr self) {
  auto& st = self->state;
  if (!st.holding)
    st.rt->log->info("run {}: paused by {} at step {}; waiting for \"resume\"", st.journal.r.id,
                     st.pause->author, st.pause->step);
  st.holding = true;
}

void wake(self_ptr self) {
  auto& st = self->state;
  if (!st.holding)
    return; // it is busy: it takes the message at its next decision
  st.holding = false;
  advance(self);
}

void take_messages(self_ptr self) {
  auto& st = self->state;
  auto& j = st.journal;
  const auto known = known_entities(j.steps, st.rt->tools);
  std::string stopped_by;
  for (const auto& m : st.inbox) {
    if (m.kind == conversation::message_kind::reply) { // answered by the kernel from the journal
      j.add_message(m, conversation::reply_json(m.seq - 1, m.text, std::ssize(j.steps)));
      continue;
    }
    auto reading = conversation::read(m.text);
    std::vector<std::string> entities;
    for (const auto& subject : reading.subjects)
      for (auto& e : conversation::resolve(subject, known))
        if (std::find(entities.begin(), entities.end(), e) == entities.end())
          entities.push_back(std::move(e));
    j.add_message(m, conversation::reading_json(reading, entities));
    st.rt->log->info("run {}: took message {} from {} at step {} ({})", j.r.id, m.seq, m.author,
                     j.steps.back().n, conversation::to_string(reading.what));
    if (reading.what == conversation::form::stop && stopped_by.empty())
      stopped_by = m.author;
  }
  st.inbox.clear();
  refresh_steering(st);
  if (!stopped_by.empty()) {
    st.cancelled_by = stopped_by;
    return finish(self, run_state::cancelled, "stopped by a message from " + stopped_by);
  }
  commit(self, after_commit::advance);
}

} // namespace run_impl

} // namespace sreh::actors
