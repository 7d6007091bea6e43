// The journal entries of a run's conversation (docs/conversation.md; actors/kernel/run/
// conversation.cpp takes the messages).

#include "actors/kernel/run/journal.hpp"
#include "core/base/json.hpp"
#include "core/base/json_object.hpp"

namespace sreh::actors {

void run_journal::add_message(const conversation::message& m, std::string reading) {
  step s;
  s.run_id = r.id;
  s.n = next_step_n();
  const bool reply = m.kind == conversation::message_kind::reply;
  s.kind = reply ? step_kind::reply : step_kind::message;
  s.state = step_state::succeeded;
  s.args = conversation::to_json(m);
  s.result = std::move(reading);
  s.decision = json::object("thought", reply ? std::string{"the answer to a question"}
                                             : "a message from " + m.author);
  s.started_at = s.executed_at = s.finished_at = rt_->clock.now_us();
  emit("step.outcome",
       json::object("n", s.n, "kind", to_string(s.kind), "state", "succeeded", "message", m.id,
                    "author", m.author, "reading", json::raw_text{s.result}));
  taken_.push_back({r.id, m.seq, s.n});
  append(std::move(s));
}

std::int64_t run_journal::last_taken_seq() const {
  std::int64_t seq = 0;
  for (const auto& s : steps)
    if (s.kind == step_kind::message || s.kind == step_kind::reply)
      if (auto a = json::parse_object(s.args))
        seq = std::max(seq, json::int_of(*a, "seq").value_or(0));
  return seq;
}

} // namespace sreh::actors
