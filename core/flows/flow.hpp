#pragma once
// Flows (DESIGN.md, "Capabilities: Flows"; docs/flows.md): a runbook declared as steps — a tool
// call, a goal for the reasoner, an approval, a condition, parallel branches, a wait, another
// flow — with typed inputs, per-step retries, timeouts and failure handling. This is the
// definition only: what a flow file says, validated (config/flows), and how control moves
// between its steps (`flow::following`, graph.hpp). Running one is the flow actor's job. Pure.

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace sreh::flows {

/// Where something was written in the flow file: 1-based line and column (0 when unknown) and
/// the dotted path of the value ("steps[2].tool"), for errors found after loading.
struct source_pos {
  int line = 0;
  int column = 0;
  std::string path;
};

// -- inputs ---------------------------------------------------------------------------------------

enum class input_type { string, number, boolean, duration, list };
[[nodiscard]] const char* to_string(input_type t);
[[nodiscard]] std::optional<input_type> parse_input_type(std::string_view s);

struct input_spec {
  std::string name;
  input_type type = input_type::string;
  /// The default as JSON (a string, a number, true/false, seconds for a duration, an array of
  /// strings); an input without one is required.
  std::optional<std::string> default_json;
  std::string description;
  [[nodiscard]] bool required() const { return !default_json; }
};

// -- step kinds -----------------------------------------------------------------------------------

/// A tool with its arguments (a JSON object whose strings may hold `${...}` placeholders).
struct tool_call {
  std::string tool;
  std::string args_json = "{}";
  source_pos tool_pos; // of the tool's name, for errors found later (an unknown tool)
};

struct goal_step {
  std::string goal;                          // a text with placeholders
  std::map<std::string, std::string> labels; // put on the sub-run; values may hold placeholders
};

/// Like a policy approval: `approvers` distinct people holding one of `roles` (any role when
/// empty) say yes within `timeout_ms` (0: no timeout); a no, or the timeout, fails the step.
struct approval_step {
  int approvers = 1;
  std::vector<std::string> roles;
  std::int64_t timeout_ms = 0;
  std::string reason; // shown to the approvers; may hold placeholders
};

/// One `when: EXPR` → `then: STEP` of a condition with cases.
struct condition_case {
  std::string when;
  std::string then;
};

/// Chooses where to go on: the first case whose expression holds, else `otherwise`. A condition
/// written `condition: EXPR` with `then`/`else` is one case. Targets are step ids of the same
/// step list, or `end` (that list ends); an empty `otherwise` goes on in file order.
struct condition_step {
  std::vector<condition_case> cases;
  std::string otherwise;
};

enum class join_mode { all, any };
[[nodiscard]] const char* to_string(join_mode j);

struct step;

/// A named list of steps run in order beside the other branches.
struct branch {
  std::string name;
  std::vector<step> steps;
};

/// Branches started at once; `all`: the step succeeds when every branch did (fails when one
/// fails), `any`: when the first branch succeeds (the others are cancelled), fails when all did.
struct parallel_step {
  std::vector<branch> branches;
  join_mode join = join_mode::all;
};

/// A durable timer (`duration_ms`), or a check of `until` every `every_ms` until it holds, failing
/// the step at `deadline_ms` after the wait began.
struct wait_step {
  std::int64_t duration_ms = 0;
  std::string until; // an expression (core/expr, literals::any); may hold placeholders
  std::int64_t deadline_ms = 0;
  std::int64_t every_ms = 30'000;
};

/// Another flow, with inputs (a JSON object whose strings may hold placeholders).
struct flow_call {
  std::string flow;
  std::string inputs_json = "{}";
  source_pos flow_pos;
};

enum class step_kind { tool, goal, approval, condition, parallel, wait, flow };
[[nodiscard]] const char* to_string(step_kind k);

// -- per-step failure handling --------------------------------------------------------------------

/// A failed attempt is tried again up to `max` more times, waiting `initial_ms`, then that times
/// `multiplier` each time, at most `max_ms`.
struct retry_policy {
  int max = 0;
  std::int64_t initial_ms = 1'000;
  std::int64_t max_ms = 60'000;
  double multiplier = 2;
  /// The wait before retry `n` (1-based).
  [[nodiscard]] std::int64_t delay_ms(int n) const;
};

/// What a step's failure (after its retries) does: fail the flow, go on as if it succeeded,
/// go to another step of the same list, or compensate every step done so far in reverse (each
/// step's `compensate` call) and then fail the flow.
enum class failure_action { fail, continue_on, go_to, compensate };
[[nodiscard]] const char* to_string(failure_action a);

struct on_failure {
  failure_action action = failure_action::fail;
  std::string target; // go_to
  /// "fail", "continue", "compensate" or "goto:STEP".
  [[nodiscard]] std::string text() const;
};

// -- steps and flows ------------------------------------------------------------------------------

struct step {
  std::string id;
  std::string description;
  std::variant<tool_call, goal_step, approval_step, condition_step, parallel_step, wait_step,
               flow_call>
    body;
  retry_policy retries;        // tool, goal, flow
  std::int64_t timeout_ms = 0; // per attempt (tool, goal, flow, parallel); 0: none
  flows::on_failure failure;
  std::optional<tool_call> compensate; // run when compensating in reverse
  std::string next;                    // where to go on instead of the next in file order
  source_pos pos;                      // of the step

  [[nodiscard]] step_kind kind() const { return static_cast<step_kind>(body.index()); }
  /// Whether running the step can change the world (tool, goal, flow): what a crash-safe runner
  /// journals intent and outcome around.
  [[nodiscard]] bool acts() const;
};

/// Where a step sits: its list (the flow's own, or a branch of a parallel step) and index.
struct step_location {
  std::string parallel; // the parallel step holding the list; "" for the flow's own steps
  std::string branch;   // that branch's name
  std::size_t index = 0;
};

/// The target that ends a list of steps (a flow's, or a branch's).
inline constexpr std::string_view end_target = "end";

struct flow {
  std::string name;
  std::string version; // content hash of the file: a run is pinned to the one it started with
  std::string label;   // the author's own version label, shown next to it
  std::string description;
  std::vector<input_spec> inputs;
  std::vector<step> steps;
  std::string source; // the file it came from
  std::string text;   // the file's text

  [[nodiscard]] const input_spec* input(std::string_view name) const;
  /// The step of that id, at any depth; null when none.
  [[nodiscard]] const step* find(std::string_view id) const;
  /// Every step, parents before the steps of their branches, in file order.
  [[nodiscard]] std::vector<const step*> all_steps() const;
  [[nodiscard]] std::optional<step_location> locate(std::string_view id) const;
  /// The steps of the list a step location names (the flow's own or a branch's).
  [[nodiscard]] const std::vector<step>* list_of(const step_location& where) const;
  /// Where control goes after step `id` succeeds without a jump: its `next`, else the step after
  /// it in its list; "" when its list ends there (then the list's container goes on).
  [[nodiscard]] std::string following(std::string_view id) const;
};

} // namespace sreh::flows
