#include "reasoner_engine.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "reasoner_report.hpp"
#include "sreh/actors/tool.hpp"

namespace sreh::plugins::reasoner {

namespace {

actors::decision call(const planned_call& c, std::string detail) {
  actors::decision d;
  d.kind = actors::decision::call_tool;
  d.tool = c.tool;
  d.args = c.args;
  d.thought = c.why.empty() ? c.tool : c.why;
  d.detail = std::move(detail);
  return d;
}

/// Hypotheses ranked for the thought line: "bad_deploy(checkout) 5, memory_leak(checkout) -1".
std::string ranking(const std::vector<hypothesis_group>& groups) {
  std::string out;
  for (auto& g : groups)
    for (std::size_t i = 0; i < g.hyps.size() && i < 3; ++i)
      out += fmt::format("{}{}({}) {:g}", out.empty() ? "" : ", ", g.hyps[i].mode->kind,
                         g.hyps[i].subject, g.hyps[i].score);
  return out;
}

/// True when the registry offers the tool (an empty registry, as in tests, offers everything).
bool offered(const actors::tool_registry& reg, const std::string& tool) {
  return reg.all().empty() || reg.find(tool) != nullptr;
}

} // namespace

actors::decision decide(const knowledge_base& kb, const actors::run_context& ctx) {
  auto ev = collect_evidence(ctx.steps, kb);
  std::int64_t boundary = ev.first_mutation;
  step_range investigation{0, boundary ? boundary - 1 : 0};
  auto tool_steps = static_cast<std::int64_t>(ev.calls.size());
  auto left = ctx.r.budget.max_steps - static_cast<std::int64_t>(ctx.steps.size());
  bool may_call = boundary == 0 && tool_steps < kb.limits.investigate_steps && left > 2;

  auto t = triage(kb, ev, ctx, investigation, may_call, false);
  if (!may_call && boundary == 0 && left > 2 && t.leaves.size() > 1) {
    // Independent faults each need their own checks: the budget grows with the leaves.
    auto extra = kb.limits.investigate_steps_per_extra_leaf
                 * static_cast<std::int64_t>(t.leaves.size() - 1);
    may_call = tool_steps < kb.limits.investigate_steps + extra;
  }
  if (t.next && offered(ctx.tools, t.next->tool))
    return call(*t.next, detail_json("triage", {}, t, ev, nullptr));

  auto groups = build_groups(kb, ev, t, investigation);
  auto check = next_check(kb, ev, groups, may_call);
  while (check && !offered(ctx.tools, check->tool))
    check.reset();  // an unavailable tool cannot separate anything; decide with what is known
  if (check) {
    auto d = call(*check, detail_json("investigate", groups, t, ev, nullptr));
    d.thought = fmt::format("{} — hypotheses: {}", d.thought, ranking(groups));
    return d;
  }
  // Every group is decided: look at the deferred siblings for independent faults while there is
  // room left for remedies and their verification.
  if (may_call && !t.deferred.empty()
      && tool_steps + kb.limits.remedy_reserve_steps < kb.limits.investigate_steps) {
    auto swept = triage(kb, ev, ctx, investigation, true, true);
    if (swept.next && offered(ctx.tools, swept.next->tool)) {
      swept.next->why = "sweep: " + swept.next->why;
      return call(*swept.next, detail_json("triage", groups, t, ev, nullptr));
    }
  }
  if (!may_call)
    for (auto& g : groups)
      if (g.state == hypothesis_group::open)
        (void) next_check(kb, ev, groups, false);

  verdict v;
  std::map<std::string, std::string> leaf_of;
  for (auto& g : groups) {
    if (g.state != hypothesis_group::diagnosed)
      continue;
    const hypothesis* lead = nullptr;
    for (auto& h : g.hyps)
      if (!h.target.empty()) {
        lead = &h;
        break;
      }
    if (!lead)
      continue;
    auto what = lead->mode->kind + ":" + lead->target;
    if (leaf_of.contains(what))
      continue;
    leaf_of[what] = g.leaf;
    v.diagnoses.push_back(lead);
    v.ambiguous.push_back(g.ambiguous);
  }

  remediation_state rem;
  if (!v.diagnoses.empty() && left > 1) {
    rem = remediate(kb, ev, t, v.diagnoses, leaf_of);
    if (rem.next && offered(ctx.tools, rem.next->tool)) {
      auto phase = kb.is_remedy_tool(rem.next->tool) ? "remediate" : "verify";
      return call(*rem.next, detail_json(phase, groups, t, ev, nullptr));
    }
  }
  v.remediation = &rem;
  if (!v.diagnoses.empty())
    v.outcome = "diagnosed";
  else if (t.leaves.empty())
    v.outcome = "no_fault_found";
  else
    v.outcome = "unknown_cause";
  v.summary = summarize(v, groups, t);

  actors::decision d;
  d.kind = actors::decision::conclude;
  d.conclusion = v.summary;
  d.thought = v.outcome == "diagnosed"        ? fmt::format("concluding: {}", ranking(groups))
              : v.outcome == "no_fault_found" ? std::string{"nothing is anomalous after triage"}
                                              : std::string{"anomalies remain that no failure "
                                                            "mode of the knowledge base explains"};
  d.detail = detail_json("conclude", groups, t, ev, &v);
  return d;
}

} // namespace sreh::plugins::reasoner
