// How a step's child runs join (docs/flows.md, "parallel"): decided, ok, the output, and which
// runs to cancel.

#include <fmt/format.h>

#include "core/base/json.hpp"
#include "core/base/json_object.hpp"
#include "core/flows/runner.hpp"

namespace sreh::flows {

join_result join(join_mode mode, bool single_goal, const std::vector<child_end>& runs) {
  join_result j;
  int succeeded = 0, failed = 0;
  std::string first_error;
  for (const auto& r : runs) {
    if (r.state == "succeeded")
      ++succeeded;
    else if (!r.state.empty()) {
      ++failed;
      if (first_error.empty())
        first_error =
          fmt::format("{} {}: {}", r.key, r.state, r.error.empty() ? "no reason given" : r.error);
    }
  }
  const int n = static_cast<int>(runs.size());
  if (mode == join_mode::all) {
    j.decided = failed > 0 || succeeded == n;
    j.ok = succeeded == n;
  } else {
    j.decided = succeeded > 0 || failed == n;
    j.ok = succeeded > 0;
  }
  if (!j.decided)
    return j;
  if (!j.ok)
    j.error =
      n == 1 ? first_error : fmt::format("{} of {} failed; first: {}", failed, n, first_error);
  for (const auto& r : runs)
    if (r.state.empty())
      j.cancel.push_back(r.key);
  if (single_goal && n == 1) {
    j.output = json::quote(runs.front().conclusion);
    return j;
  }
  j.output = json::build([&](json::writer& w) {
    w.StartObject();
    for (const auto& r : runs) {
      // The key's last part names it in the output: the branch (KEY = STEP/BRANCH), or "run".
      auto slash = r.key.rfind('/');
      auto name = slash == std::string::npos ? std::string{"run"} : r.key.substr(slash + 1);
      json::field(w, name,
                  json::raw_text{json::object("run", r.run_id, "state",
                                              r.state.empty() ? "cancelled" : r.state, "conclusion",
                                              r.conclusion)});
    }
    w.EndObject();
  });
  return j;
}

} // namespace sreh::flows
