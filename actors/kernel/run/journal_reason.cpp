// The journal entries of reason steps (a language model's turns; actors/kernel/run/reason.cpp).

#include "actors/kernel/run/journal.hpp"
#include "core/base/json.hpp"
#include "core/base/json_object.hpp"

namespace sreh::actors {

void run_journal::add_reason_intent(const std::string& args) {
  step s;
  s.run_id = r.id;
  s.n = next_step_n();
  s.kind = step_kind::reason;
  s.state = step_state::intent;
  s.args = args;
  s.decision = json::object("thought", "ask the model");
  s.started_at = rt_->clock.now_us();
  emit("step.intent", json::object("n", s.n, "kind", "reason", "args", json::raw_text{s.args}));
  append(std::move(s));
}

void run_journal::record_reason_outcome(std::int64_t n, bool ok, std::string result,
                                        std::string error) {
  auto& s = step_at(n);
  s.state = ok ? step_state::succeeded : step_state::failed;
  s.result = result.empty() ? "{}" : std::move(result);
  s.error = std::move(error);
  s.finished_at = rt_->clock.now_us();
  facts_.at(static_cast<std::size_t>(n - 1)).answer =
    ok ? read_answer(s.result) : std::optional<model_answer>{};
  emit_outcome(s);
  touch(n);
}

} // namespace sreh::actors
