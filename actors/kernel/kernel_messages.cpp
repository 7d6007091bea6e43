// People's messages to runs (docs/conversation.md), as the kernel handles them: each is
// committed first (once per idempotency key, in the run's order), then delivered to the run's
// actor, which takes it at its next decision. A run without an actor keeps its messages in the
// kernel's inbox until it wakes (they are delivered to the actor it is woken in); one parked on an
// approval whose action a new constraint forbids is woken at once with the approval withdrawn.
// At start the inbox is filled from the store (messages committed, not yet taken).

#include <fmt/format.h>

#include <algorithm>

#include "actors/kernel/kernel_state.hpp"
#include "actors/kernel/run/actor_impl.hpp"
#include "actors/policy/policy_check.hpp"
#include "core/base/failpoint.hpp"
#include "core/base/json.hpp"
#include "core/base/json_object.hpp"
#include "core/conversation/steering.hpp"

namespace sreh::actors {

namespace {

/// What a message needs from the store before it is committed.
struct say_view {
  std::optional<run> r;
  std::optional<conversation::message> existing; // the idempotency key's message
  std::int64_t last_seq = 0;
};

sreh::error refusal(const run& r, std::int64_t last_seq) {
  if (r.state == run_state::cancelled)
    return {errc::conflict, fmt::format("run {} was cancelled: it takes no messages", r.id)};
  if (is_terminal(r.state))
    return {errc::conflict, fmt::format("run {} has ended ({}): a message is taken only while "
                                        "the run works; start a follow-up run to go on",
                                        r.id, to_string(r.state))};
  if (last_seq >= conversation::max_messages_per_run)
    return {errc::too_many, fmt::format("run {} has {} messages, the most a run keeps "
                                        "(max_messages_per_run)",
                                        r.id, last_seq)};
  return {};
}

/// The message's event on the run's stream: not of the run's own event sequence (run_seq 0),
/// which its actor keeps.
event message_event(const runtime& rt, const conversation::message& m) {
  event e;
  e.id = rt.ids.next("evt");
  e.run_id = m.run_id;
  e.kind = "run.message";
  e.at = m.at;
  e.data = conversation::to_json(m);
  return e;
}

/// A parked run's pending action and what the constraint check needs.
struct pending_view {
  std::optional<run> r;
  std::optional<approval> a;
  std::vector<step> steps;
};

/// The constraint among `messages` that forbids the action of approval `a`, as a vote that
/// withdraws it; none when none does.
std::optional<approval_vote> withdrawal(const runtime& rt, const pending_view& v,
                                        const std::vector<conversation::message>& messages) {
  if (!v.r || !v.a || v.a->state != approval_state::pending || v.a->kind != approval_kind::action)
    return std::nullopt;
  const auto target =
    prepare_policy_check(rt, rt.policy, *v.r, v.a->tool, v.a->args, v.a->step_n).action.target;
  if (target.empty())
    return std::nullopt;
  const auto known = run_impl::known_entities(v.steps, rt.tools);
  for (const auto& m : messages) {
    auto reading = conversation::read(m.text);
    if (reading.what != conversation::form::constraint)
      continue;
    for (const auto& subject : reading.subjects)
      for (const auto& e : conversation::resolve(subject, known))
        if (conversation::constraint_on({{e, m.text, m.author, m.id, 0}}, target) != nullptr)
          return approval_vote{
            m.author, "constraint", false,
            fmt::format("constraint from {} (message {}): \"{}\"", m.author, m.seq, m.text),
            rt.clock.now_us()};
  }
  return std::nullopt;
}

/// A run parked on an approval got messages: when one forbids the pending action, the approval
/// is withdrawn (committed with its event) and the run woken to take the messages. The caller's
/// operation on the run ends in `then`.
void consider_parked(kernel_self self, const std::string& run_id, std::function<void()> then) {
  read_store(
    self,
    [run_id](persistence::store& s) {
      pending_view v;
      auto r = s.get_run(run_id);
      if (!r || !r->has_value() || (*r)->state != run_state::waiting ||
          (*r)->waiting_for != wait_reason::approval)
        return v;
      v.r = std::move(**r);
      if (auto a = s.approval_for_step(run_id, v.r->steps); a && a->has_value())
        v.a = std::move(**a);
      if (auto steps = s.get_steps(run_id))
        v.steps = std::move(*steps);
      return v;
    },
    [self, run_id, then = std::move(then)](pending_view v) mutable {
      auto& st = self->state;
      auto vote = withdrawal(*st.rt, v, st.inbox[run_id]);
      if (!vote || st.runs.count(run_id) != 0)
        return then();
      auto a = *v.a;
      auto r = *v.r;
      a.votes.push_back(*vote);
      a.state = approval_state::withdrawn;
      a.decided_at = vote->at;
      persistence::write_batch b;
      b.events.push_back(
        parked_event(*st.rt, r, "approval.withdrawn",
                     json::object("approval", a.id, "by", vote->by, "reason", vote->comment)));
      b.approvals.push_back(a);
      b.update = r;
      kernel_commit(self, std::move(b),
                    [self, a, r, run_id, then = std::move(then)](const sreh::error& err) mutable {
                      auto& st = self->state;
                      if (err) {
                        st.rt->log->error("run {}: cannot withdraw approval {}: {}", run_id, a.id,
                                          err.message);
                        return then();
                      }
                      st.rt->log->info("run {}: approval {} withdrawn: {}", run_id, a.id,
                                       a.votes.back().comment);
                      withdraw_parked(self, std::move(r), std::move(a), std::move(then));
                    });
    });
}

/// The message is committed: to the run's actor, or into the inbox until the run wakes.
void deliver(kernel_self self, const conversation::message& m, std::function<void()> then) {
  auto& st = self->state;
  if (auto a = st.runs.find(m.run_id); a != st.runs.end()) {
    self->send(a->second, say_atom::value, std::vector<conversation::message>{m});
    return then();
  }
  st.inbox[m.run_id].push_back(m);
  consider_parked(self, m.run_id, std::move(then));
}

void say_op(kernel_self self, conversation::message m,
            caf::typed_response_promise<kernel_reply> rp) {
  auto read = [id = m.run_id,
               key = m.idempotency_key](persistence::store& s) -> expected<say_view> {
    say_view v;
    auto r = s.get_run(id);
    if (!r)
      return r.error();
    v.r = std::move(*r);
    if (!key.empty()) {
      auto e = s.message_by_key(id, key);
      if (!e)
        return e.error();
      v.existing = std::move(*e);
    }
    auto seq = s.last_message_seq(id);
    if (!seq)
      return seq.error();
    v.last_seq = *seq;
    return v;
  };
  read_store(self, std::move(read), [self, m = std::move(m), rp](expected<say_view> v) mutable {
    auto& st = self->state;
    auto id = m.run_id;
    auto fail = [&](const sreh::error& err) {
      rp.deliver(reply_error(err.code, err.message));
      release_run(self, id);
    };
    if (!v)
      return fail(v.error());
    if (!v->r)
      return fail({errc::not_found, fmt::format("no run with id '{}'", id)});
    kernel_reply rep;
    rep.run_id = id;
    if (v->existing) { // a retried request: the message it made
      rep.said = *v->existing;
      rp.deliver(rep);
      return release_run(self, id);
    }
    if (auto err = refusal(*v->r, v->last_seq))
      return fail(err);
    m.seq = v->last_seq + 1;
    m.id = st.rt->ids.next("msg");
    m.at = st.rt->clock.now_us();
    m.kind = conversation::message_kind::message;
    m.taken_step = 0;
    persistence::write_batch b;
    b.messages.push_back(m);
    b.events.push_back(message_event(*st.rt, m));
    kernel_commit(self, std::move(b), [self, m, rp, rep](const sreh::error& err) mutable {
      if (err) {
        rp.deliver(reply_error(err.code, err.message));
        return release_run(self, m.run_id);
      }
      failpoint("after_message", m.seq); // committed, not yet delivered (tests: kill -9)
      rep.said = m;
      rep.created = true;
      rp.deliver(rep);
      deliver(self, m, [self, id = m.run_id] { release_run(self, id); });
    });
  });
}

} // namespace

caf::result<kernel_reply> say(kernel_self self, conversation::message m) {
  if (auto err = conversation::check_text(m.text))
    return reply_error(err.code, std::move(err.message));
  auto rp = self->make_response_promise<kernel_reply>();
  auto id = m.run_id;
  with_run(self, id, [self, m = std::move(m), rp]() mutable { say_op(self, std::move(m), rp); });
  return rp;
}

void hand_inbox(kernel_self self, const std::string& run_id, const run_actor& a) {
  auto& st = self->state;
  auto i = st.inbox.find(run_id);
  if (i == st.inbox.end())
    return;
  self->send(a, say_atom::value, std::move(i->second));
  st.inbox.erase(i);
}

void load_inbox(kernel_self self, std::function<void()> then) {
  read_store(
    self,
    [](persistence::store& s) -> expected<std::vector<conversation::message>> {
      auto runs = s.runs_with_untaken_messages();
      if (!runs)
        return runs.error();
      std::vector<conversation::message> out;
      for (const auto& id : *runs) {
        auto ms = s.untaken_messages(id);
        if (!ms)
          return ms.error();
        out.insert(out.end(), ms->begin(), ms->end());
      }
      return out;
    },
    [self, then = std::move(then)](expected<std::vector<conversation::message>> ms) {
      auto& st = self->state;
      if (!ms)
        st.rt->log->error("recovery: cannot read the messages runs have not taken: {}",
                          ms.error().message);
      else if (!ms->empty())
        st.rt->log->info("recovery: {} messages wait to be taken by their runs", ms->size());
      if (ms)
        for (auto& m : *ms)
          st.inbox[m.run_id].push_back(std::move(m));
      then();
    });
}

void consider_inbox(kernel_self self) {
  std::vector<std::string> ids;
  for (const auto& [id, _] : self->state.inbox)
    if (self->state.runs.count(id) == 0)
      ids.push_back(id);
  for (const auto& id : ids)
    with_run(self, id,
             [self, id] { consider_parked(self, id, [self, id] { release_run(self, id); }); });
}

} // namespace sreh::actors
