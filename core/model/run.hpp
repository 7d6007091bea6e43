#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/base/clock.hpp"
#include "core/base/expected.hpp"

namespace sreh {

// -- run state machine -----------------------------------------------------------------------

/// pending → running ⇄ waiting → succeeded | failed | cancelled (DESIGN.md, "The durable kernel").
enum class run_state { pending, running, waiting, succeeded, failed, cancelled };

/// What a waiting run waits for.
/// `runs`: a flow run waits for the runs a step of it started (docs/flows.md).
enum class wait_reason { none, approval, timer, model, tool, runs };

/// Inputs that move a run between states.
enum class run_input {
  start,   // pending → running
  wait,    // running → waiting
  resume,  // waiting → running
  succeed, // running → succeeded
  fail,    // pending | running | waiting → failed
  cancel,  // pending | running | waiting → cancelled
  recover, // running → running (restart after a crash), waiting → waiting
};

[[nodiscard]] const char* to_string(run_state s);
[[nodiscard]] const char* to_string(wait_reason w);
[[nodiscard]] const char* to_string(run_input i);
[[nodiscard]] std::optional<run_state> parse_run_state(std::string_view s);
[[nodiscard]] std::optional<wait_reason> parse_wait_reason(std::string_view s);

/// True for succeeded, failed and cancelled: nothing moves a terminal run.
[[nodiscard]] bool is_terminal(run_state s);

/// The pure transition function. Returns the next state, or a `conflict` error naming the state
/// and the input that is not allowed in it.
[[nodiscard]] expected<run_state> transition(run_state from, run_input in);

// -- budgets -----------------------------------------------------------------------------------

/// Limits per run. Zero means "no limit" for deadline; the others always apply.
struct run_budget {
  std::int64_t max_steps = 50;
  std::int64_t max_tokens = 200'000;
  std::int64_t deadline_us = 0; // absolute; 0 = none
  std::int64_t max_result_bytes = 64 * 1024;
  /// The run's model calls may cost at most this much (in the unit of the routes' prices:
  /// `model.price`); 0 = no limit. A run whose calls cost more fails.
  double max_cost = 0;
};

// -- run ---------------------------------------------------------------------------------------

/// A goal run as stored. `checkpoint` is the run's compact state (JSON), written in the same
/// transaction as each step.
struct run {
  std::string id;
  std::string goal;
  run_state state = run_state::pending;
  wait_reason waiting_for = wait_reason::none;
  std::string submitter;
  std::string idempotency_key; // empty when the client sent none
  std::string node_id;         // owning node
  timestamp_us created_at = 0;
  timestamp_us updated_at = 0;
  std::int64_t steps = 0; // steps journaled so far
  std::int64_t tokens = 0;
  run_budget budget;
  std::string checkpoint = "{}"; // JSON object
  std::string conclusion;        // set when succeeded
  std::string error;             // set when failed or cancelled
  /// What the run achieved, beside how it ended (core/model/outcome.hpp): "" until it ends.
  std::string outcome;
  /// How well it reasoned (core/quality, docs/quality.md), as JSON `{"total", "parts"}`: "" until
  /// a goal run ends (flow runs are not scored).
  std::string quality;
  std::string labels = "{}"; // JSON object of string labels
  // -- what drives the run (docs/flows.md)
  std::string kind = "goal"; // goal: the reasoner chooses the steps; flow: a flow's steps
  std::string parent;        // the flow run whose step started this one; "" for none
  /// A flow run's pinned definition, as JSON: `{"flow", "version", "source", "text", "inputs",
  /// "parallel"?, "branch"?}` (a branch run runs one branch of a parallel step). "{}" for a goal
  /// run. Written when the run is created; never changes.
  std::string spec = "{}";
};

/// The cost of the run's model calls so far, as its checkpoint keeps it (`cost`; 0 when absent).
[[nodiscard]] double cost_of_checkpoint(std::string_view checkpoint);
/// The number of the run's last event, as its checkpoint keeps it (`run_seq`; 0 when absent).
[[nodiscard]] std::int64_t run_seq_of_checkpoint(std::string_view checkpoint);
/// A run's checkpoint: `{"run_seq": N}`, with `"cost"` once the run's model calls cost anything.
[[nodiscard]] std::string checkpoint_of(std::int64_t run_seq, double cost);

} // namespace sreh
