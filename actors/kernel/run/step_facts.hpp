#pragma once
// The kernel's typed reading of a journaled step. A step's args, decision and result are JSON
// text: that is what the store keeps, the API serves and the reasoners read. The members the
// kernel itself acts on (which step a timer checks, which model call a tool step answers, which
// flow step a step belongs to, what a model answered) are read here, once per step: the journal
// reads a step as it writes it or as the run's steps come back from the store, so that a live
// run and a recovered one see the same facts, and every later look is typed.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/boxed.hpp"
#include "core/base/clock.hpp"
#include "core/flows/flow.hpp"
#include "core/flows/runner.hpp"
#include "core/llm/types.hpp"
#include "core/model/step.hpp"

namespace sreh::actors {

/// A reason step's recorded response (its result).
struct model_answer {
  std::string text;
  std::vector<llm::tool_call> calls;
  std::string bad; // why the answer is unusable ("" when it is fine)
};

/// What ties a step to the flow step it is part of (`decision.detail.flow`).
struct flow_tag {
  std::string step; // the flow step's id
  flows::phase phase = flows::phase::run;
  int attempt = 1;
  std::int64_t timeout_ms = 0; // a tool step's timeout; 0 for none
};

/// What a subruns step waits for (its args).
struct runs_wait {
  flows::join_mode join = flows::join_mode::all;
  bool single_goal = false;
  std::int64_t timeout_ms = 0;   // 0: no timeout
  std::vector<std::string> keys; // of the runs it started, in order
};

/// Held out of line (`boxed`): the facts a tool step does not have, so that its facts stay small
/// (a run in flight keeps those of every step; docs/benchmarks.md, "Memory with 10,000 runs in
/// flight").
struct step_facts {
  std::string thought; // decision.thought, of a step with other facts (a flow step's); else ""
  // -- tool steps (decision.detail, decision.policy)
  std::int64_t reason_step = 0; // made from a tool call of this reason step (0: it was not)
  std::string tool_call_id;
  std::int64_t compensates = 0; // the step it undoes (0: none)
  bool rejected = false;        // refused before policy saw it (bad model output)
  boxed<flow_tag> flow;         // any step of a flow run that belongs to a flow step
  // -- timer steps (args); `for_step` also of observe steps
  timestamp_us until = 0;
  std::int64_t for_step = 0; // the step whose post-condition it checks (0: a flow's wait)
  std::string check;         // that post-condition, described
  // -- subruns steps
  boxed<runs_wait> runs;
  // -- reason steps: the request the intent was prepared as; the answer, once recorded
  std::string request_hash;
  boxed<model_answer> answer;

  /// A flow tool step's timeout (ms); 0 for none.
  [[nodiscard]] std::int64_t timeout_ms() const { return flow ? flow->timeout_ms : 0; }
};

/// The one parser of a step's payloads. Missing or malformed members read as their defaults.
[[nodiscard]] step_facts read_facts(const step& s);

/// A reason step's recorded response; none when `result` is not an object.
[[nodiscard]] std::optional<model_answer> read_answer(std::string_view result);

} // namespace sreh::actors
