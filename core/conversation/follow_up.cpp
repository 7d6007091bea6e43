#include "core/conversation/follow_up.hpp"

#include <fmt/format.h>

#include <limits>

#include "core/base/json.hpp"
#include "core/base/json_object.hpp"
#include "core/base/text.hpp"

namespace sreh::conversation {

namespace {

constexpr std::size_t max_line_bytes = 600; // of one fact, conclusion or action in the context

std::string clipped(std::string_view s, std::size_t max = max_line_bytes) {
  if (s.size() <= max)
    return std::string{s};
  return std::string{utf8_prefix(s, max)} + "…";
}

/// The account with at most `evidence` facts per cause (`npos`: all of them).
std::string render(const run& parent, const postmortem::document& d, std::size_t evidence) {
  std::string out = fmt::format("Follow-up of run {} ({}), which was asked: {}\n", parent.id,
                                to_string(parent.state), clipped(parent.goal));
  if (!d.summary.empty())
    out += fmt::format("It concluded: {}\n", clipped(d.summary));
  bool left_out = false;
  if (!d.causes.empty())
    out += "Causes it found:\n";
  for (const auto& c : d.causes) {
    if (c.kind.empty())
      out += fmt::format("- {}\n", c.target.empty() ? "(named in its conclusion only)" : c.target);
    else
      out += fmt::format("- {} on {} (confidence {:.2f})\n", c.kind, c.target, c.confidence);
    for (std::size_t i = 0; i < c.evidence.size(); ++i) {
      if (i >= evidence) {
        left_out = true;
        break;
      }
      out += fmt::format("  - {}\n", clipped(c.evidence[i]));
    }
  }
  if (!d.actions.empty())
    out += "What it did:\n";
  for (const auto& a : d.actions)
    out += fmt::format("- step {}: {} {} ({}{}{})\n", a.step, a.tool, clipped(a.args, 200), a.state,
                       a.verified ? ", verified" : "",
                       a.approved_by.empty() ? "" : ", approved by " + a.approved_by);
  if (!d.did_not_work.empty())
    out += "What did not work:\n";
  for (const auto& s : d.did_not_work)
    out += fmt::format("- {}\n", clipped(s));
  if (!d.follow_ups.empty())
    out += "Left to follow up:\n";
  for (const auto& s : d.follow_ups)
    out += fmt::format("- {}\n", clipped(s));
  if (left_out)
    out += fmt::format("[more evidence left out: GET /v1/runs/{}/postmortem]\n", parent.id);
  return out;
}

} // namespace

std::string follow_up_context(const run& parent, const postmortem::document& d,
                              std::size_t max_bytes) {
  // Each cause's evidence shrinks first: what was concluded and done matters most.
  for (auto evidence :
       {std::numeric_limits<std::size_t>::max(), std::size_t{3}, std::size_t{1}, std::size_t{0}})
    if (auto text = render(parent, d, evidence); text.size() <= max_bytes)
      return text;
  constexpr std::string_view cut = "\n[cut to fit]\n";
  auto text = render(parent, d, 0);
  return std::string{utf8_prefix(text, max_bytes > cut.size() ? max_bytes - cut.size() : 0)} +
         std::string{cut};
}

std::string follow_up_spec(const run& parent, const postmortem::document& d) {
  auto priors = json::array(d.causes, [](json::writer& w, const postmortem::cause& c) {
    if (!c.kind.empty())
      json::write_object(w, "kind", c.kind, "target", c.target);
  });
  return json::object("context", follow_up_context(parent, d), "follow_up_of", parent.id, "priors",
                      json::raw_text{priors});
}

std::optional<follow_up> follow_up_of(std::string_view spec) {
  if (spec.find("\"follow_up_of\"") == std::string_view::npos)
    return std::nullopt;
  auto doc = json::parse_object(spec);
  if (!doc)
    return std::nullopt;
  const auto* of = json::member(*doc, "follow_up_of");
  if (of == nullptr || !of->IsString())
    return std::nullopt;
  follow_up f;
  f.of = json::string_or(*doc, "follow_up_of");
  if (const auto* ps = json::member(*doc, "priors"); ps != nullptr && ps->IsArray())
    for (const auto& p : ps->GetArray())
      if (p.IsObject())
        f.priors.push_back({json::string_or(p, "kind"), json::string_or(p, "target")});
  return f;
}

} // namespace sreh::conversation
