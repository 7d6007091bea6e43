// POST /v1/goals bodies: refused with a message, or a goal within its limits, labels a JSON
// object of strings, and a budget no larger than the defaults.
#include "core/base/json.hpp"
#include "core/model/goal.hpp"
#include "tests/fuzz/fuzz.hpp"

void fuzz_one(std::string_view input) {
  sreh::run_budget defaults;
  auto g = sreh::parse_goal_request(input, defaults);
  if (!g) {
    SREH_FUZZ_CHECK(g.error().code == sreh::errc::invalid_argument);
    SREH_FUZZ_CHECK(!g.error().message.empty());
    return;
  }
  SREH_FUZZ_CHECK(!g->goal.empty() && g->goal.size() <= 4096);
  auto labels = sreh::json::parse(g->labels);
  SREH_FUZZ_CHECK(labels && labels->IsObject());
  for (const auto& m : labels->GetObject())
    SREH_FUZZ_CHECK(m.value.IsString());
  SREH_FUZZ_CHECK(g->budget.max_steps >= 1 && g->budget.max_steps <= defaults.max_steps);
}
