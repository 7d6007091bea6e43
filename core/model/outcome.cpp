#include "core/model/outcome.hpp"

#include "core/base/json.hpp"

namespace sreh::outcome {

namespace {

/// The structured result of the run's conclusion (`decision.detail.result`): its `outcome` and
/// `recovery`, or empty strings when the conclusion states none.
std::pair<std::string, std::string> stated(const std::vector<step>& steps) {
  for (auto s = steps.rbegin(); s != steps.rend(); ++s) {
    if (s->kind != step_kind::conclude)
      continue;
    auto doc = json::parse(s->decision);
    if (!doc)
      return {};
    const auto* detail = json::member(*doc, "detail");
    const auto* result = detail ? json::member(*detail, "result") : nullptr;
    if (!result)
      return {};
    return {json::string_of(json::member(*result, "outcome")),
            json::string_of(json::member(*result, "recovery"))};
  }
  return {};
}

bool denied_step(const step& s) {
  return s.state == step_state::failed && !retryable(s) &&
         s.result.find("\"not_executed\"") != std::string::npos;
}

/// What the journal says of the run's actions: were any denied, did any run, and how did the
/// checks after the last one that ran judge it.
struct acts {
  bool denied = false;
  bool executed = false;
  bool failed = false;
  std::optional<bool> verified; // the newest check after the last executed action
};

acts read_acts(const std::vector<step>& steps, const mutating_fn& mutating) {
  acts a;
  for (const auto& s : steps) {
    if (s.kind == step_kind::tool && mutating(s.tool)) {
      if (denied_step(s)) {
        a.denied = true;
      } else if (s.state == step_state::succeeded) {
        a.executed = true;
        a.verified.reset();
      } else if (s.state == step_state::failed) {
        a.failed = true;
      }
      continue;
    }
    if (s.kind == step_kind::approval && denied_step(s)) { // a flow's own approval step
      a.denied = true;
      continue;
    }
    if (s.kind != step_kind::observe || !a.executed || s.state != step_state::succeeded)
      continue;
    auto doc = json::parse(s.result);
    if (const auto* h = doc ? json::member(*doc, "holds") : nullptr; h && h->IsBool())
      a.verified = h->GetBool();
  }
  return a;
}

std::string from_reasoner(const std::string& stated_outcome, const std::string& recovery,
                          const acts& a) {
  if (stated_outcome == "no_fault_found")
    return std::string{no_fault};
  if (stated_outcome == "unknown_cause")
    return std::string{a.denied && !a.executed ? denied : unexplained};
  if (recovery == "recovered")
    return std::string{mitigated};
  if (recovery == "partial")
    return std::string{partial};
  if (recovery == "not_recovered")
    return std::string{not_mitigated};
  if (a.denied && !a.executed)
    return std::string{denied};
  if (a.executed || a.failed)
    return std::string{not_mitigated};
  return std::string{diagnosed};
}

std::string from_journal(std::string_view kind, run_state state, const acts& a) {
  if (a.denied && !a.executed)
    return std::string{denied};
  if (a.executed) {
    if (a.verified)
      return std::string{*a.verified ? mitigated : not_mitigated};
    if (kind == "flow")
      return std::string{state == run_state::succeeded ? completed : not_mitigated};
    return std::string{unverified};
  }
  if (state != run_state::succeeded)
    return {};
  return std::string{kind == "flow" ? completed : diagnosed};
}

} // namespace

std::string of_run(std::string_view kind, run_state state, const std::vector<step>& steps,
                   const mutating_fn& mutating) {
  auto a = read_acts(steps, mutating);
  if (state == run_state::cancelled)
    return a.executed ? std::string{unverified} : std::string{};
  auto [said, recovery] = stated(steps);
  if (state == run_state::succeeded && !said.empty())
    return from_reasoner(said, recovery, a);
  return from_journal(kind, state, a);
}

} // namespace sreh::outcome
