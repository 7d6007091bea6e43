// The replay report as text for a terminal and as JSON (`sreh replay --json`).
#include <fmt/format.h>

#include "core/base/json.hpp"
#include "eval/replay.hpp"
#include "eval/replay/journal.hpp"

namespace sreh::eval {

using detail::clip;

std::string render_text(const replay_report& r) {
  std::string out = fmt::format("replay of run {}: \"{}\"\n  on a scratch node as run {}: the "
                                "recorded model answers and tool results, no model server\n\n",
                                r.source_run, clip(r.goal, 70), r.replay_run);
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
  rapidjson::StringBuffer buf;
  json::writer w{buf};
  w.StartObject();
  w.Key("run");
  w.String(r.source_run.c_str());
  w.Key("replay_run");
  w.String(r.replay_run.c_str());
  w.Key("same");
  w.Bool(r.same());
  w.Key("first_divergence");
  if (r.first_divergence)
    w.Int64(r.first_divergence);
  else
    w.Null();
  w.Key("steps");
  w.StartArray();
  for (const auto& s : r.steps) {
    w.StartObject();
    w.Key("n");
    w.Int64(s.n);
    w.Key("recorded");
    w.String(s.recorded.c_str());
    w.Key("replayed");
    w.String(s.replayed.c_str());
    w.Key("same");
    w.Bool(s.same);
    if (!s.same) {
      w.Key("difference");
      w.String(s.difference.c_str());
    }
    w.EndObject();
  }
  w.EndArray();
  w.Key("recorded_end");
  w.String(r.recorded_end.c_str());
  w.Key("replayed_end");
  w.String(r.replayed_end.c_str());
  w.Key("same_end");
  w.Bool(r.same_end);
  w.Key("reason_steps");
  w.Int64(r.reason_steps);
  w.Key("same_request_hashes");
  w.Int64(r.same_request_hashes);
  w.Key("notes");
  w.StartArray();
  for (const auto& n : r.notes)
    w.String(n.c_str());
  w.EndArray();
  w.Key("wall_ms");
  w.Double(r.wall_ms);
  w.EndObject();
  return buf.GetString();
}

} // namespace sreh::eval
