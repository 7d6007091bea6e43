#pragma once
// The Work actor's state and what its runs start with, shared by works/work_actor.cpp (its
// operations, commits, checks and commands) and works/work_runs.cpp (its runs' requests and
// conversation). Private to the actors module; every function runs in the Work's actor.

#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "actors/works/orchestrator.hpp"
#include "core/expr/expression.hpp"
#include "core/works/conversation.hpp"

namespace sreh::actors::work_impl {

struct work_actor_state {
  works_env_ptr env;
  orchestrator_impl_actor orch;
  works::work w;
  works::work_template t;
  std::map<std::string, std::string> values; // the fields as texts, for the template's texts
  std::optional<expr::expression> done;      // the done-criteria with the fields filled in
  std::string done_error;                    // why they could not be made
  pending_calls calls;
  bool busy = false;
  bool stopping = false;
  std::deque<std::function<void()>> ops;
  std::string last_criteria_error;
  static inline const char* name = "sreh.work";
};

using work_self = work_actor::stateful_pointer<work_actor_state>;

// -- the Work's runs (work_runs.cpp) -----------------------------------------------------------

/// The labels of the Work's runs: the Work's own, its id, template and policy scope.
[[nodiscard]] std::string run_labels(const work_actor_state& st);

/// What the Work's next run pursues: the template's goal, or its flow with the inputs rendered
/// from the Work's fields (read as each input's type).
[[nodiscard]] expected<goal_request> run_request(const work_actor_state& st);

// -- the Work's conversation (docs/conversation.md, "Works") ----------------------------------

/// What a new run of the Work starts with: the Work, what was said on it, its earlier runs.
struct work_history {
  std::vector<event> timeline;
  std::vector<works::earlier_run> runs;
};

/// The Work's timeline and, with `runs`, the conclusions of its last runs (on the store pool).
[[nodiscard]] expected<work_history> read_history(persistence::store& s, const works::work& w,
                                                  bool runs);

/// Tells the active run what was said on the Work since it started (comments, triggers' texts),
/// each as a message under a key of its timeline entry: telling it again (after a crash, at the
/// next spawn) makes no second message.
void tell_active_run(work_self self);

/// A goal run's spec with the context it starts with: `{"context": TEXT}`.
[[nodiscard]] std::string context_spec(const works::work& w, const work_history& h);

/// The most standing constraints a new run of a Work starts with (the latest are kept).
inline constexpr std::size_t max_standing = 20;

/// What a new run of a Work is told before it begins: the constraints said on the Work ("leave
/// payments-db alone" in a comment or a trigger's text), which stand for its every run, with who
/// said them. Steering that belongs to one run ("check X first", "pause") does not carry over.
[[nodiscard]] std::vector<opening_message> standing_constraints(const work_history& h);

} // namespace sreh::actors::work_impl
