// The replay report as text for a terminal and as JSON (`sreh replay --json`).
#include <fmt/format.h>

#include <optional>

#include "core/base/json.hpp"
#include "core/base/json_object.hpp"
#include "core/journal/step_text.hpp"
#include "eval/replay.hpp"

namespace sreh::eval {

using journal::clip;

std::string render_text(const replay_report& r) {
  std::string out =
    fmt::format("replay of run {}: \"{}\"\n  on a scratch node as run {}: {}\n\n", r.source_run,
                clip(r.goal, 70), r.replay_run,
                r.kind == "flow" ? "its pinned flow, the recorded tool results and checks, no wait"
                                 : "the recorded model answers and tool results, no model server");
  out += fmt::format("  {:>3}  {:<66}  {}\n", "#", "recorded", "replay");
  for (const auto& s : r.steps)
    out += fmt::format("  {:>3}  {:<66}  {}\n", s.n, s.recorded.empty() ? "-" : s.recorded,
                       s.same ? std::string{"same"} : "DIFFERS: " + s.difference);
  out += fmt::format("\n  recorded end: {}\n  replay end:   {}{}\n", clip(r.recorded_end, 100),
                     clip(r.replayed_end, 100), r.same_end ? "  (same)" : "  (DIFFERS)");
  if (r.reason_steps > 0)
    out += fmt::format("  model requests: {} of {} reason steps assembled the same request "
                       "(hash){}\n",
                       r.same_request_hashes, r.reason_steps,
                       r.same_request_hashes == r.reason_steps
                         ? ""
                         : " (a different request: the prompt, the tools, the context budget or an "
                           "earlier step changed)");
  for (const auto& n : r.notes)
    out += "  note: " + n + "\n";
  if (r.same())
    out += fmt::format("\nsame steps and end: {} steps ({:.0f} ms)\n", r.steps.size(), r.wall_ms);
  else
    out += fmt::format("\ndiverged{}\n", r.first_divergence
                                           ? fmt::format(" at step {}", r.first_divergence)
                                           : std::string{": the run ended differently"});
  return out;
}

std::string render_json(const replay_report& r) {
  auto steps = json::array(r.steps, [](json::writer& w, const auto& s) {
    w.StartObject();
    json::fields(w, "n", s.n, "recorded", s.recorded, "replayed", s.replayed, "same", s.same);
    if (!s.same)
      json::field(w, "difference", s.difference);
    w.EndObject();
  });
  return json::build([&](json::writer& w) {
    w.StartObject();
    json::fields(w, "run", r.source_run, "kind", r.kind, "replay_run", r.replay_run, "same",
                 r.same(), "first_divergence",
                 r.first_divergence ? std::optional<std::int64_t>{r.first_divergence}
                                    : std::nullopt,
                 "steps", json::raw_text{steps}, "recorded_end", r.recorded_end, "replayed_end",
                 r.replayed_end, "same_end", r.same_end, "reason_steps", r.reason_steps,
                 "same_request_hashes", r.same_request_hashes, "notes", r.notes);
    w.Key("wall_ms");
    w.Double(r.wall_ms);
    w.EndObject();
  });
}

} // namespace sreh::eval
