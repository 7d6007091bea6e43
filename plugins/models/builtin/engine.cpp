#include "plugins/models/builtin/engine.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <set>

#include "plugins/models/builtin/report.hpp"
#include "actors/tools/tool.hpp"

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

namespace {

/// One pass of triage → diagnosis → remedy → verification. A later round starts when the
/// verification shows the alerted entities still anomalous: another fault hides behind the first.
struct round_data {
  std::int64_t start = 0;                      // the round looks at steps after this one
  triage_result t;
  std::vector<hypothesis_group> groups;
  std::vector<const hypothesis*> diagnoses;
  std::vector<bool> ambiguous;
  std::map<std::string, std::string> leaf_of;
  remediation_state rem;
};

/// The leaders of the decided groups that no earlier round diagnosed.
void pick_diagnoses(round_data& rd, const std::set<std::string>& known) {
  for (auto& g : rd.groups) {
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
    if (rd.leaf_of.contains(what) || known.contains(what))
      continue;
    rd.leaf_of[what] = g.leaf;
    rd.diagnoses.push_back(lead);
    rd.ambiguous.push_back(g.ambiguous);
  }
}

template <class T>
void append_unique(std::vector<T>& dst, const std::vector<T>& src) {
  for (auto& x : src)
    if (std::find(dst.begin(), dst.end(), x) == dst.end())
      dst.push_back(x);
}

} // namespace

actors::decision decide(const knowledge_base& kb, const actors::run_context& ctx) {
  auto ev = collect_evidence(ctx.steps, kb);
  auto left = ctx.r.budget.max_steps - static_cast<std::int64_t>(ctx.steps.size());
  std::deque<round_data> rounds;
  std::set<std::string> known;          // kind:target diagnosed by earlier rounds
  std::set<std::string> healthy_before; // seen healthy by earlier rounds
  std::int64_t start = 0;

  for (int k = 0;; ++k) {
    auto& rd = rounds.emplace_back();
    rd.start = start;
    std::int64_t first = 0;               // the round's first remedy call
    for (auto& c : ev.calls)
      if (c.step > start && c.mutation) {
        first = c.step;
        break;
      }
    step_range investigation{start, first ? first - 1 : 0};
    walk_options wo;
    wo.global = {0, first ? first - 1 : 0};
    wo.known_healthy = healthy_before;
    auto tool_steps = static_cast<std::int64_t>(std::count_if(
      ev.calls.begin(), ev.calls.end(), [&](const call_record& c) { return c.step > start; }));

    if (first == 0) {
      // Investigating: walk, then check what separates the hypotheses best.
      bool may_call = tool_steps < kb.limits.investigate_steps && left > 2;
      wo.allow_calls = may_call;
      rd.t = triage(kb, ev, ctx, investigation, wo);
      if (!may_call && left > 2 && rd.t.leaves.size() > 1) {
        // Independent faults each need their own checks: the budget grows with the leaves.
        auto extra = kb.limits.investigate_steps_per_extra_leaf
                     * static_cast<std::int64_t>(rd.t.leaves.size() - 1);
        may_call = tool_steps < kb.limits.investigate_steps + extra;
      }
      if (rd.t.next && offered(ctx.tools, rd.t.next->tool))
        return call(*rd.t.next, detail_json("triage", {}, rd.t, ev, nullptr));

      rd.groups = build_groups(kb, ev, rd.t, investigation, wo.global);
      auto check = next_check(kb, ev, rd.groups, may_call);
      while (check && !offered(ctx.tools, check->tool))
        check.reset();  // an unavailable tool cannot separate anything; decide with what is known
      if (check) {
        auto d = call(*check, detail_json("investigate", rd.groups, rd.t, ev, nullptr));
        d.thought = fmt::format("{} — hypotheses: {}", d.thought, ranking(rd.groups));
        return d;
      }
      // Every group is decided: look at the deferred siblings for independent faults while
      // there is room left for remedies and their verification.
      if (may_call && !rd.t.deferred.empty()
          && tool_steps + kb.limits.remedy_reserve_steps < kb.limits.investigate_steps) {
        auto swo = wo;
        swo.allow_calls = swo.sweep = true;
        auto swept = triage(kb, ev, ctx, investigation, swo);
        if (swept.next && offered(ctx.tools, swept.next->tool)) {
          swept.next->why = "sweep: " + swept.next->why;
          return call(*swept.next, detail_json("triage", rd.groups, rd.t, ev, nullptr));
        }
      }
      if (!may_call)
        for (auto& g : rd.groups)
          if (g.state == hypothesis_group::open)
            (void) next_check(kb, ev, rd.groups, false);
      pick_diagnoses(rd, known);
      if (!rd.diagnoses.empty() && left > 1) {
        rd.rem = remediate(kb, ev, rd.t, rd.diagnoses, rd.leaf_of);
        if (rd.rem.next && offered(ctx.tools, rd.rem.next->tool)) {
          auto phase = kb.is_remedy_tool(rd.rem.next->tool) ? "remediate" : "verify";
          return call(*rd.rem.next, detail_json(phase, rd.groups, rd.t, ev, nullptr));
        }
      }
      break;
    }

    // The round has acted: its diagnoses are what its investigation decided.
    wo.allow_calls = false;
    rd.t = triage(kb, ev, ctx, investigation, wo);
    rd.groups = build_groups(kb, ev, rd.t, investigation, wo.global);
    (void) next_check(kb, ev, rd.groups, false);
    pick_diagnoses(rd, known);
    // A remedy call none of this round's diagnoses makes began the next round: this round's
    // remedies and verification are judged on the steps before it.
    auto keys = remedy_keys(ev, rd.diagnoses);
    std::int64_t next_first = 0;
    for (auto& c : ev.calls)
      if (c.step >= first && c.mutation && !keys.contains(c.key)) {
        next_first = c.step;
        break;
      }
    if (next_first) {
      auto bounded = collect_evidence(ctx.steps, kb, next_first);
      rd.rem = remediate(kb, bounded, rd.t, rd.diagnoses, rd.leaf_of);
    } else {
      rd.rem = remediate(kb, ev, rd.t, rd.diagnoses, rd.leaf_of);
      if (rd.rem.next && offered(ctx.tools, rd.rem.next->tool) && left > 0) {
        auto phase = kb.is_remedy_tool(rd.rem.next->tool) ? "remediate" : "verify";
        return call(*rd.rem.next, detail_json(phase, rd.groups, rd.t, ev, nullptr));
      }
    }
    for (auto* h : rd.diagnoses)
      known.insert(h->mode->kind + ":" + h->target);
    healthy_before.insert(rd.t.healthy.begin(), rd.t.healthy.end());
    for (auto& [name, cls] : rd.t.classes)
      if (!cls.empty())
        healthy_before.erase(name);
    auto last = rd.rem.last_action ? rd.rem.last_action : first;
    if (next_first) {
      start = std::min(last, next_first - 1);
      continue;
    }
    // Verified, or out of rounds or budget: conclude. Otherwise the alerted entities are still
    // anomalous: go back to triage over what the remedies left.
    if (rd.rem.still_anomalous.empty() || k + 1 >= kb.limits.max_rounds
        || left <= kb.limits.remedy_reserve_steps || rd.diagnoses.empty())
      break;
    start = last;
  }

  // The conclusion gathers every round.
  auto& final_round = rounds.back();
  verdict v;
  remediation_state rem;
  std::vector<hypothesis_group> groups;
  triage_result t = final_round.t;
  for (auto& rd : rounds) {
    for (std::size_t i = 0; i < rd.diagnoses.size(); ++i) {
      v.diagnoses.push_back(rd.diagnoses[i]);
      v.ambiguous.push_back(rd.ambiguous[i]);
    }
    rem.records.insert(rem.records.end(), rd.rem.records.begin(), rd.rem.records.end());
    rem.notes.insert(rem.notes.end(), rd.rem.notes.begin(), rd.rem.notes.end());
    for (auto& [what, ok] : rd.rem.mitigated)
      rem.mitigated[what] = ok;
    rem.last_action = std::max(rem.last_action, rd.rem.last_action);
    if (&rd == &final_round)
      continue;
    for (auto& g : rd.groups)
      if (g.state == hypothesis_group::diagnosed)
        groups.push_back(g);
    append_unique(t.leaves, rd.t.leaves);
    append_unique(t.off_path, rd.t.off_path);
    append_unique(t.unobservable, rd.t.unobservable);
    for (auto& [n, c] : rd.t.classes)
      t.classes.try_emplace(n, c);
  }
  groups.insert(groups.end(), final_round.groups.begin(), final_round.groups.end());
  if (rounds.size() > 1) {
    std::vector<fact> obs;
    for (std::size_t i = 0; i + 1 < rounds.size(); ++i)
      obs.insert(obs.end(), rounds[i].t.observations.begin(), rounds[i].t.observations.end());
    obs.push_back({0, fmt::format("round {}: the alerted entities stayed anomalous after the "
                                  "remedies; triage again", rounds.size()), 0});
    obs.insert(obs.end(), t.observations.begin(), t.observations.end());
    t.observations = std::move(obs);
    if (final_round.rem.last_action > 0 && final_round.rem.still_anomalous.empty()) {
      // The alerted entities recovered once every round's remedy took effect.
      for (auto& [what, ok] : rem.mitigated)
        ok = true;
      rem.notes.push_back(fmt::format("after {} rounds of remedies the alerted entities recovered",
                                      rounds.size()));
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
