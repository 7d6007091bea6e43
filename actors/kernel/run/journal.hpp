#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "actors/gateway/model_provider.hpp"
#include "actors/kernel/run/step_facts.hpp"
#include "actors/runtime/runtime.hpp"
#include "core/conversation/message.hpp"
#include "core/model/approval.hpp"
#include "core/model/event.hpp"
#include "core/model/run.hpp"
#include "core/model/step.hpp"
#include "core/policy/policy.hpp"
#include "persistence/store/store.hpp"

namespace sreh::actors {

/// The in-memory image of one run and the writes it has not handed to the store yet. Every
/// mutation goes through here so that a step row, the run's checkpoint and the events they
/// produce always travel in the same write_batch (transactional outbox).
///
/// Steps are added only through the journal, which reads each one's payloads once
/// (`facts(n)`, run/step_facts.hpp).
///
/// Concurrency: owned by one run actor; not thread-safe.
class run_journal {
 public:
  run r;
  std::vector<step> steps;
  double cost = 0; // of the model calls so far (price table of model routes), in the checkpoint

  void init(const runtime& rt, run initial, std::vector<step> journaled);

  /// The batch that creates the run: its row and the run.created event.
  [[nodiscard]] persistence::write_batch take_create_batch();
  /// pending → running (emits run.started).
  void start();
  /// Appends an event of this run (run_seq assigned here, seq at commit).
  void emit(const char* kind, std::string data);
  /// A non-empty reason when the step, token or deadline budget is used up.
  [[nodiscard]] std::string budget_exhausted(timestamp_us now) const;

  /// The kernel's reading of step n's payloads (1-based).
  [[nodiscard]] const step_facts& facts(std::int64_t n) const {
    return facts_.at(static_cast<std::size_t>(n - 1));
  }
  [[nodiscard]] const step_facts& facts(const step& s) const { return facts(s.n); }

  /// The number the next step will have.
  [[nodiscard]] std::int64_t next_step_n() const {
    return static_cast<std::int64_t>(steps.size()) + 1;
  }
  /// The intent of a tool step (number `next_step_n()`), with the policy decision that was taken
  /// for it (JSON).
  void add_tool_intent(const decision& d, const std::string& policy);
  void add_conclusion(const decision& d);
  void record_outcome(std::int64_t n, bool ok, std::string result, std::string error);
  void record_cancelled(std::int64_t n, std::string why);
  /// The tool cannot tell whether step n took effect: the step is in doubt, the run waits for a
  /// human decision (an in_doubt approval, whose id is returned).
  std::string mark_in_doubt(std::int64_t n);
  /// Policy asks humans about step n: a pending approval (written with the batch) and the run
  /// waits for it. Returns the approval's id.
  std::string request_approval(std::int64_t n, const policy::decision& d);
  /// The run wakes up with the settled approval of its last step: approved → running (the
  /// caller commits, then executes); denied or expired → the step fails with who decided and
  /// why; an in-doubt step confirmed as done → succeeded. Returns true when the step must run.
  bool resume(const approval& a);
  // -- the action runtime: post-conditions, durable timers, compensation
  /// A timer step: the run waits (parked) until `until`, then checks step `for_step` (0: a
  /// flow's timer, whose `decision` tags it with its flow step).
  void add_timer(std::int64_t for_step, timestamp_us until, const std::string& description,
                 std::string decision = "{}");
  /// The timer of the last step fired: its outcome, and the run runs again. Returns the step it
  /// was waiting to check.
  std::int64_t timer_fired();
  /// The run's recall: a call of the memory tool `tool` the kernel made before the first step,
  /// journaled with its outcome at once (its decision carries `recall_marker`).
  void add_recall(const std::string& tool, std::string args, std::string result,
                  const std::string& thought);
  /// An observe step: the post-condition of step `for_step` was checked.
  void add_observation(std::int64_t for_step, bool holds, const std::string& detail,
                       const std::string& description);

  // -- flow runs (run/flow.cpp)
  /// A step of a flow run with no effect of its own to run (an approval, the runs it starts):
  /// its intent. `decision` tags it with its flow step.
  void add_flow_intent(step_kind kind, std::string args, std::string decision);
  /// A flow step's check, journaled with its outcome at once (a condition's choice, a wait's
  /// check, a step that could not start).
  void add_flow_record(step_kind kind, bool ok, std::string result, std::string error,
                       std::string decision);
  /// The run waits for the runs its last step started (their ids, a JSON array).
  void wait_for_runs(const std::string& run_ids);
  /// Those runs' join is decided: the last step's outcome, and the run runs again.
  void runs_joined(bool ok, std::string result, std::string error);
  // -- reason steps (a language model's turn: run/reason.cpp)
  /// The intent of a reason step: `args` (JSON) says the route, model, request hash and context.
  void add_reason_intent(const std::string& args);
  /// The outcome of reason step n: the whole response (JSON, never cut) or why no model answered.
  void record_reason_outcome(std::int64_t n, bool ok, std::string result, std::string error);

  // -- conversation (run/journal_message.cpp, docs/conversation.md)
  /// A message `m` taken into the run now: a `message` step (a person's) or a `reply` step (the
  /// agent's answer to a question) whose args are the message and whose result is how the run
  /// read it (`reading`, JSON); the message is marked taken by it in the same batch.
  void add_message(const conversation::message& m, std::string reading);
  /// The `seq` of the newest message a step of this run took (0: none).
  [[nodiscard]] std::int64_t last_taken_seq() const;

  /// Moves the run to a terminal state (emits run.succeeded / run.failed / run.cancelled).
  void end_run(run_state final_state, std::string message);

  /// Everything changed since the last call, as one batch (the run row with its checkpoint,
  /// the changed steps, the new events). `outcomes` receives the step numbers whose outcome
  /// the batch carries.
  [[nodiscard]] persistence::write_batch take_batch(std::vector<std::int64_t>& outcomes);
  /// The last batch did not commit (nothing of it was applied): mark its steps and events as
  /// unwritten again, so that the next take_batch rebuilds it with the same event ids.
  void restore_last_batch();

 private:
  step& step_at(std::int64_t n);
  /// Adds step `s` (number `next_step_n()`) with its facts, to be written with the next batch.
  void append(step s);
  void touch(std::int64_t n);
  void emit_outcome(const step& s);
  void emit_flow_intent(const step& s);

  const runtime* rt_ = nullptr;
  std::int64_t run_seq_ = 0;
  std::vector<step_facts> facts_;   // of `steps`, one each
  std::vector<std::int64_t> dirty_; // step numbers changed since the last batch
  std::vector<event> events_;
  std::vector<approval> approvals_;      // new or changed approvals for the next batch
  std::vector<std::int64_t> last_steps_; // what the last batch carried, for a retry
  std::vector<event> last_events_;
  std::vector<approval> last_approvals_;
  std::vector<persistence::message_taken> taken_; // messages the next batch marks taken
  std::int64_t conversation_steps_ = 0;           // message and reply steps (not budgeted)
  std::vector<persistence::message_taken> last_taken_;
};

/// Cuts a tool result to `max_bytes`: over the limit it becomes
/// `{"truncated":true,"bytes":N,"preview":"<first KiB, cut at a UTF-8 boundary>"}`.
[[nodiscard]] std::string cap_result(std::string result, std::int64_t max_bytes, bool& truncated);

} // namespace sreh::actors
