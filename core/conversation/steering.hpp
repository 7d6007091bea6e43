#pragma once
// How a run reads a person's message (docs/conversation.md, "Steering"): a small, documented set
// of forms, found in any sentence of the message and case-insensitively —
//
//   constraint   "do not touch X", "don't touch X", "do not change X", "leave X alone",
//                "hands off X", "keep away from X", "no changes to X"
//   check_first  "check X first", "look at X first", "start with X"
//   stop | pause | resume   the message is that word (or "stop the run", "please pause", ...)
//   question     ends with "?" or starts with why / what / how / which / who / when / did / ...
//   note         anything else: taken into the context, answered with what the run is doing
//
// X may be several subjects ("checkout and payments-db"). A subject is resolved against the
// entities the run has seen: a name, a kind ("the database" is every database seen), or, when
// nothing matches, the subject as said (an action on a target of that name is still blocked).
// A constraint holds for the rest of the run: the kernel adds it to the run's policy as a rule
// that denies every mutating action on its entities (so no reasoner can ignore it). Pure.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/model/step.hpp"

namespace sreh::conversation {

enum class form { constraint, check_first, stop, pause, resume, question, note };

[[nodiscard]] const char* to_string(form f);

/// What a message says, as the run reads it.
struct reading {
  form what = form::note;
  std::vector<std::string> subjects; // constraint and check_first: as said, lower-cased
};

[[nodiscard]] reading read(std::string_view text);

/// An entity the run has seen: its name and kind (service, database, cache, queue, host, job;
/// "" when unknown).
using known_entity = std::pair<std::string, std::string>;

/// The entities `subject` names among `known` (see above); never empty.
[[nodiscard]] std::vector<std::string> resolve(std::string_view subject,
                                               const std::vector<known_entity>& known);

/// The result a `message` step journals: `{"form", "subjects", "entities"}`.
[[nodiscard]] std::string reading_json(const reading& r, const std::vector<std::string>& entities);

/// What a message asked of the run about one entity: a constraint (no mutating action on
/// `entity` for the rest of the run) or a check to make first.
struct directive {
  std::string entity;
  std::string said; // the message's text
  std::string author;
  std::string message_id;
  std::int64_t step = 0; // the message step that took it
};
using constraint = directive;

/// The directives of form `f` (constraint or check_first) the run's `message` steps gave, in
/// step order (one per entity: the first).
[[nodiscard]] std::vector<directive> directives_of(const std::vector<step>& journal, form f);

/// The constraints the run's `message` steps set: `directives_of(journal, form::constraint)`.
[[nodiscard]] std::vector<constraint> constraints_of(const std::vector<step>& journal);

/// The pause in force: the run's last pause or resume message, when it is a pause (its
/// `entity` empty); none when the run is not paused.
[[nodiscard]] std::optional<directive> pause_of(const std::vector<step>& journal);

/// The wire shape of a pause: `{"author","said","message","step"}`, or null for none.
[[nodiscard]] std::string pause_json(const std::optional<directive>& pause);

/// The constraint on `target` (its entity, compared case-insensitively), or null.
[[nodiscard]] const constraint* constraint_on(const std::vector<constraint>& all,
                                              std::string_view target);

/// Why an action on `c.entity` is not taken: "constraint from alice at step 7: \"…\"".
[[nodiscard]] std::string describe(const constraint& c);

/// The wire shape of a run's constraints: `[{"entity","said","author","message","step"}]`.
[[nodiscard]] std::string constraints_json(const std::vector<constraint>& all);

} // namespace sreh::conversation
