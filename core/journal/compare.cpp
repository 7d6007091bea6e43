#include "core/journal/compare.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/base/json.hpp"
#include "core/journal/step_text.hpp"

namespace sreh::journal {

namespace {

std::string request_hash(const step& s) {
  auto doc = object_of(s.args);
  return doc ? json::string_or(*doc, "request_hash") : std::string{};
}

/// The parts of a reason step's response that decide what the run does next.
std::string answer_of(const step& s) {
  auto doc = object_of(s.result);
  if (!doc)
    return s.result;
  std::string out = json::string_or(*doc, "answered_by") + '\x1f' + json::string_or(*doc, "text") +
                    '\x1f' + json::string_or(*doc, "finish") + '\x1f' +
                    json::string_or(*doc, "bad");
  if (const auto* calls = json::member(*doc, "tool_calls"))
    out += '\x1f' + json::stringify(*calls);
  return out;
}

} // namespace

std::string describe(const step& s) {
  switch (s.kind) {
  case step_kind::tool: {
    auto effect = policy_effect(s);
    return fmt::format("tool {} {} {}{}", s.tool, clip(canonical(s.args), 40), to_string(s.state),
                       effect.empty() || effect == "allow" ? "" : " [" + effect + "]");
  }
  case step_kind::reason: {
    auto doc = object_of(s.result);
    if (!doc)
      return fmt::format("reason {}", to_string(s.state));
    std::string names;
    if (const auto* calls = json::member(*doc, "tool_calls"); calls && calls->IsArray())
      for (const auto& c : calls->GetArray())
        names += (names.empty() ? "" : ", ") + json::string_or(c, "name");
    return fmt::format("reason {}: {}", json::string_or(*doc, "answered_by", "-"),
                       !names.empty()
                         ? "calls " + names
                         : fmt::format("answers \"{}\"", clip(json::string_or(*doc, "text"), 36)));
  }
  case step_kind::observe: {
    auto doc = object_of(s.result);
    const auto* holds = doc ? json::member(*doc, "holds") : nullptr;
    return fmt::format("observe {} {}", s.tool,
                       holds && holds->IsBool() && holds->GetBool() ? "holds" : "does not hold");
  }
  case step_kind::conclude: {
    auto doc = object_of(s.result);
    return fmt::format("conclude \"{}\"",
                       clip(doc ? json::string_or(*doc, "conclusion") : std::string{}, 50));
  }
  case step_kind::message: {
    auto args = object_of(s.args);
    auto reading = object_of(s.result);
    return fmt::format("message from {}: \"{}\" ({})",
                       args ? json::string_or(*args, "author") : std::string{"?"},
                       clip(args ? json::string_or(*args, "text") : std::string{}, 36),
                       reading ? json::string_or(*reading, "form") : std::string{"?"});
  }
  case step_kind::reply: {
    auto args = object_of(s.args);
    return fmt::format("reply \"{}\"",
                       clip(args ? json::string_or(*args, "text") : std::string{}, 50));
  }
  default:
    return fmt::format("{} {}", to_string(s.kind), to_string(s.state));
  }
}

namespace {

/// What a person said in a message or reply step: its author and text.
std::string said(const step& s) {
  auto args = object_of(s.args);
  return args ? json::string_or(*args, "author") + '\x1f' + json::string_or(*args, "text")
              : std::string{};
}

} // namespace

std::string difference(const step& a, const step& b, const sides& names) {
  const auto& na = names.a;
  const auto& nb = names.b;
  if (a.kind != b.kind)
    return fmt::format("{}: a {} step, {}: a {} step", na, to_string(a.kind), nb,
                       to_string(b.kind));
  if (a.tool != b.tool)
    return fmt::format("tool: {} {}, {} {}", na, a.tool, nb, b.tool);
  if (a.kind == step_kind::tool && canonical(a.args) != canonical(b.args))
    return fmt::format("arguments: {} {}, {} {}", na, clip(canonical(a.args)), nb,
                       clip(canonical(b.args)));
  if (a.kind == step_kind::tool && policy_effect(a) != policy_effect(b))
    return fmt::format("policy: {} {} ({}), {} {} ({})", na, policy_effect(a),
                       policy_rule(a).empty() ? "default" : policy_rule(a), nb, policy_effect(b),
                       policy_rule(b).empty() ? "default" : policy_rule(b));
  if (a.state != b.state)
    return fmt::format("state: {} {}, {} {}{}", na, to_string(a.state), nb, to_string(b.state),
                       b.error.empty() ? "" : fmt::format(" ({})", clip(b.error)));
  if (a.kind == step_kind::reason && answer_of(a) != answer_of(b))
    return "the answer differs";
  if (a.kind == step_kind::reason && request_hash(a) != request_hash(b))
    return fmt::format("the model was asked something else (its request hash differs){}",
                       names.same_answers_recorded ? "; the recorded answer was used" : "");
  const bool conversation = a.kind == step_kind::message || a.kind == step_kind::reply;
  if (conversation && said(a) != said(b))
    return fmt::format("the message: {} {}, {} {}", na, clip(describe(a)), nb, clip(describe(b)));
  if (a.kind == step_kind::message && canonical(a.result) != canonical(b.result))
    return fmt::format("how the run read the message: {} {}, {} {}", na, clip(canonical(a.result)),
                       nb, clip(canonical(b.result)));
  const bool live = names.live_from > 0 && b.n >= names.live_from;
  if (live)
    return {};
  if ((a.kind == step_kind::tool || a.kind == step_kind::observe ||
       a.kind == step_kind::conclude) &&
      a.state == step_state::succeeded && canonical(a.result) != canonical(b.result))
    return "the result differs";
  if (a.error != b.error)
    return fmt::format("error: {} \"{}\", {} \"{}\"", na, clip(a.error), nb, clip(b.error));
  return {};
}

std::string end_of(const run& r) {
  if (r.state == run_state::succeeded)
    return fmt::format("succeeded: {}", r.conclusion);
  return fmt::format("{}: {}", to_string(r.state), r.error);
}

comparison compare(const std::vector<step>& a, const std::vector<step>& b, const sides& names) {
  comparison out;
  for (std::size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    step_comparison c;
    c.n = static_cast<std::int64_t>(i) + 1;
    if (i < a.size())
      c.recorded = describe(a[i]);
    if (i < b.size())
      c.replayed = describe(b[i]);
    if (i >= a.size())
      c.difference = fmt::format("the {} has no step {}", names.a_run, c.n);
    else if (i >= b.size())
      c.difference = fmt::format("the {} has no step {}", names.b_run, c.n);
    else
      c.difference = difference(a[i], b[i], names);
    c.same = c.difference.empty();
    if (!c.same && out.first_divergence == 0)
      out.first_divergence = c.n;
    if (i < a.size() && a[i].kind == step_kind::reason) {
      ++out.reason_steps;
      if (i < b.size() && b[i].kind == step_kind::reason &&
          request_hash(a[i]) == request_hash(b[i]))
        ++out.same_request_hashes;
    }
    out.steps.push_back(std::move(c));
  }
  return out;
}

} // namespace sreh::journal
