#include "actors/gateway/scripted_provider.hpp"

#include <fmt/format.h>

namespace sreh::actors {

scripted_provider::scripted_provider(std::vector<config::scripted_step> script)
  : script_(std::move(script)) {}

decision scripted_provider::decide(const run_context& ctx) {
  std::size_t done = 0, failed = 0;
  for (auto& s : ctx.steps) {
    if (s.kind != step_kind::tool || is_recall(s))
      continue; // the recall is the kernel's step, not the script's
    ++done;
    failed += s.state == step_state::failed ? 1 : 0;
  }
  decision d;
  if (done < script_.size()) {
    auto& next = script_[done];
    d.kind = decision::call_tool;
    d.tool = next.tool;
    d.args = next.args;
    d.thought = fmt::format("scripted step {} of {}", done + 1, script_.size());
    return d;
  }
  d.kind = decision::conclude;
  d.thought = "the script is complete";
  d.conclusion = failed == 0 ? fmt::format("script finished: {} steps", done)
                             : fmt::format("script finished: {} steps, {} failed", done, failed);
  return d;
}

} // namespace sreh::actors
