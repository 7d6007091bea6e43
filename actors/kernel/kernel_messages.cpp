// People's messages to runs (docs/conversation.md), as the kernel handles them: each is
// committed first (once per idempotency key, in the run's order), then delivered to the run's
// actor, which takes it at its next decision. A run without an actor keeps its messages in the
// kernel's inbox until it wakes (they are delivered to the actor it is woken in); one parked on an
// approval whose action a new constraint forbids is woken at once with the approval withdrawn.
// At start the inbox is filled from the store (messages committed, not yet taken).

#include <fmt/format.h>

#include <algorithm>

#include "actors/gateway/llm_provider.hpp"
#include "actors/kernel/kernel_state.hpp"
#include "actors/kernel/run/actor_impl.hpp"
#include "actors/policy/policy_check.hpp"
#include "actors/postmortem/postmortem_service.hpp"
#include "core/base/failpoint.hpp"
#include "core/base/json.hpp"
#include "core/base/json_object.hpp"
#include "core/base/text.hpp"
#include "core/conversation/answer.hpp"
#include "core/conversation/steering.hpp"

namespace sreh::actors {

namespace {

/// What a message needs from the store before it is committed.
struct say_view {
  std::optional<run> r;
  std::optional<conversation::message> existing; // the idempotency key's message
  std::optional<conversation::message> reply;    // and the reply to it, when there is one
  std::int64_t last_seq = 0;
  /// A question: the run as its account reads it (its steps and approvals as committed).
  std::optional<postmortem::run_record> record;
};

sreh::error refusal(const run& r, std::int64_t last_seq, bool question) {
  if (r.state == run_state::cancelled)
    return {errc::conflict, fmt::format("run {} was cancelled: it takes no messages", r.id)};
  if (is_terminal(r.state) && !question)
    return {errc::conflict, fmt::format("run {} has ended ({}): it answers questions (a message "
                                        "ending in \"?\") but takes no other message; start a "
                                        "follow-up run to go on",
                                        r.id, to_string(r.state))};
  // A question takes two: itself and its reply.
  if (last_seq + (question ? 2 : 1) > conversation::max_messages_per_run)
    return {errc::too_many, fmt::format("run {} has {} messages, the most a run keeps "
                                        "(max_messages_per_run)",
                                        r.id, last_seq)};
  return {};
}

/// The agent's reply to question `q`, saying `text`. Taken by the run like a person's message
/// (journaled as its `reply` step) while it works.
conversation::message reply_message(const runtime& rt, const conversation::message& q,
                                    std::string_view text) {
  conversation::message m;
  m.id = rt.ids.next("msg");
  m.run_id = q.run_id;
  m.seq = q.seq + 1;
  m.author = std::string{conversation::agent_author};
  m.kind = conversation::message_kind::reply;
  m.text = std::string{utf8_prefix(text, conversation::max_text_bytes)};
  m.at = q.at;
  m.taken_step = q.taken_step;
  return m;
}

/// The answer to `q` from the run's own account of its journal (core/conversation/answer.hpp).
std::string journal_answer(const runtime& rt, const conversation::message& q,
                           const postmortem::run_record& rec) {
  auto doc = postmortem::of_run(rec.r, rec.steps, rec.approvals, rt.tools.mutating());
  return conversation::answer_from(q.text, doc, rec.steps).text;
}

/// The model behind a run's questions: the node's language model, unless the node replays
/// (its answers are recorded) or decides with a deterministic provider.
llm_provider* model_for_questions(const runtime& rt) {
  auto* llm = rt.provider ? rt.provider->as_llm() : nullptr;
  return llm && !llm->answers() ? llm : nullptr;
}

/// Asks the model question `q` about the run `rec` reads, with the run's context (the one its
/// next reason step would send) and the question as the last user turn; `then(text)` in the
/// kernel with the model's answer, its citations checked against the journal. When no model
/// answers in text, the answer is the journal's, saying so first.
void ask_model(kernel_self self, llm_provider& llm, const conversation::message& q,
               std::shared_ptr<const postmortem::run_record> rec,
               std::function<void(std::string)> then) {
  auto& st = *self->state.rt;
  auto prepared = llm.prepare(run_context{rec->r, rec->steps, st.tools, nullptr},
                              conversation::model_question(q));
  auto cell = std::make_shared<std::optional<gateway_result>>();
  auto token = self->state.calls.add([self, cell, q, rec, then = std::move(then)] {
    const auto& res = **cell;
    const auto& rt = *self->state.rt;
    if (res.ok && !res.response.text.empty()) {
      rt.log->info("run {}: the model ({}) answered message {}", q.run_id, res.route, q.seq);
      return then(conversation::checked_model_answer(res.response.text, std::ssize(rec->steps)));
    }
    auto why =
      !res.ok ? "no model answered: " + res.error : std::string{"the model answered with no text"};
    rt.log->warn("run {}: message {}: {}; answered from the journal", q.run_id, q.seq, why);
    then(fmt::format("({}. This answer is from the run's journal.)\n{}", why,
                     journal_answer(rt, q, *rec)));
  });
  auto handle = kernel_impl_actor{self};
  llm.gateway().call(
    prepared.request,
    [handle, cell, token](gateway_result r) {
      cell->emplace(std::move(r));
      caf::anon_send(handle, called_atom::value, token);
    },
    {}, llm.route_for(rec->r));
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
    if (m.kind != conversation::message_kind::message)
      continue; // the agent's reply sets nothing
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

/// The messages (of one run) are committed: to the run's actor, or into the inbox until the run
/// wakes.
void deliver(kernel_self self, std::vector<conversation::message> ms, std::function<void()> then) {
  auto& st = self->state;
  const auto run_id = ms.front().run_id;
  if (auto a = st.runs.find(run_id); a != st.runs.end()) {
    self->send(a->second, say_atom::value, std::move(ms));
    return then();
  }
  auto& inbox = st.inbox[run_id];
  inbox.insert(inbox.end(), ms.begin(), ms.end());
  consider_parked(self, run_id, std::move(then));
}

/// Commits message `m` (and the agent's `answer` to it, when it is a question) with their
/// events, answers the request, and hands both to the run unless it has ended.
void commit_said(kernel_self self, conversation::message m,
                 std::optional<conversation::message> answer, bool ended,
                 caf::typed_response_promise<kernel_reply> rp) {
  auto& st = self->state;
  persistence::write_batch b;
  b.messages.push_back(m);
  b.events.push_back(run_impl::message_event(*st.rt, m));
  if (answer) {
    b.messages.push_back(*answer);
    b.events.push_back(run_impl::message_event(*st.rt, *answer));
  }
  kernel_commit(self, std::move(b), [self, m, answer, ended, rp](const sreh::error& err) mutable {
    if (err) {
      rp.deliver(reply_error(err.code, err.message));
      return release_run(self, m.run_id);
    }
    failpoint("after_message", m.seq); // committed, not yet delivered (tests: kill -9)
    kernel_reply rep;
    rep.run_id = m.run_id;
    rep.said = m;
    if (answer)
      rep.answered = *answer;
    rep.created = true;
    rp.deliver(rep);
    if (ended)
      return release_run(self, m.run_id);
    std::vector<conversation::message> ms{m};
    if (answer)
      ms.push_back(*answer);
    deliver(self, std::move(ms), [self, id = m.run_id] { release_run(self, id); });
  });
}

void say_op(kernel_self self, conversation::message m,
            caf::typed_response_promise<kernel_reply> rp) {
  const bool question = conversation::read(m.text).what == conversation::form::question;
  auto read = [id = m.run_id, key = m.idempotency_key,
               question](persistence::store& s) -> expected<say_view> {
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
      if (v.existing) {
        auto next = s.list_messages(id, v.existing->seq, 1);
        if (!next)
          return next.error();
        if (!next->empty() && next->front().kind == conversation::message_kind::reply)
          v.reply = next->front();
        return v;
      }
    }
    auto seq = s.last_message_seq(id);
    if (!seq)
      return seq.error();
    v.last_seq = *seq;
    if (question && v.r && v.r->state != run_state::cancelled) {
      auto rec = read_run_record(s, *v.r);
      if (!rec)
        return rec.error();
      v.record = std::move(*rec);
    }
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
      if (v->reply)
        rep.answered = *v->reply;
      rp.deliver(rep);
      return release_run(self, id);
    }
    if (auto err = refusal(*v->r, v->last_seq, v->record.has_value()))
      return fail(err);
    const bool ended = is_terminal(v->r->state);
    m.seq = v->last_seq + 1;
    m.id = st.rt->ids.next("msg");
    m.at = st.rt->clock.now_us();
    m.kind = conversation::message_kind::message;
    // An ended run's journal is closed: its conversation goes on in the messages alone, each
    // read as of the run's last step.
    m.taken_step = ended ? v->r->steps : 0;
    if (!v->record)
      return commit_said(self, std::move(m), std::nullopt, ended, rp);
    if (auto* llm = model_for_questions(*st.rt)) {
      auto rec = std::make_shared<const postmortem::run_record>(std::move(*v->record));
      return ask_model(self, *llm, m, rec, [self, m, ended, rp](std::string text) mutable {
        auto answer = reply_message(*self->state.rt, m, text);
        commit_said(self, std::move(m), std::move(answer), ended, rp);
      });
    }
    auto answer = reply_message(*st.rt, m, journal_answer(*st.rt, m, *v->record));
    commit_said(self, std::move(m), std::move(answer), ended, rp);
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
        if (ms->empty())
          continue;
        // From the first untaken message on, with the agent's replies among them (a reply is
        // taken with its question, so it is untaken only after an untaken question).
        auto all = s.list_messages(id, ms->front().seq - 1, persistence::max_message_rows);
        if (!all)
          return all.error();
        for (auto& m : *all)
          if (m.taken_step == 0)
            out.push_back(std::move(m));
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
