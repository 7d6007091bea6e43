#include "plugins/models/builtin/engine.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <memory>
#include <set>

#include "plugins/models/builtin/report.hpp"
#include "plugins/models/builtin/round.hpp"

namespace sreh::plugins::reasoner {

namespace {

actors::decision call(const planned_call& c, std::string detail) {
  actors::decision d;
  d.kind = actors::decision::call_tool;
  d.tool = c.tool;
  d.args = c.args;
  d.thought = c.why.empty() ? c.tool : c.why;
  d.detail = std::move(detail);
  d.not_before_us = c.not_before_us;
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

/// The run's evidence, kept in its memory between decisions.
class run_evidence final : public actors::run_memory {
 public:
  evidence_journal journal;
};

/// The journal in the run's memory (put there on first use), or `fresh` when it has none.
evidence_journal& journal_of(const actors::run_context& ctx, evidence_journal& fresh) {
  if (!ctx.memory)
    return fresh;
  auto* kept = dynamic_cast<run_evidence*>(ctx.memory->get());
  if (!kept) {
    auto made = std::make_unique<run_evidence>();
    kept = made.get();
    *ctx.memory = std::move(made);
  }
  return kept->journal;
}

/// One decision: rounds over the evidence until one needs a call, else the conclusion.
class planner {
 public:
  planner(const knowledge_base& kb, const actors::run_context& ctx, const evidence_journal& j,
          const toolbox& tools)
    : kb_(kb), journal_(j), ev_(j.all()), constraints_(conversation::constraints_of(ctx.steps)),
      checks_first_(conversation::directives_of(ctx.steps, conversation::form::check_first)),
      sit_{kb, ev_, tools, ctx.r, &constraints_, &checks_first_},
      left_(ctx.r.budget.max_steps -
            std::count_if(ctx.steps.begin(), ctx.steps.end(), [](const step& s) {
              return s.kind != step_kind::message && s.kind != step_kind::reply;
            })) {}

  actors::decision decide();

 private:
  /// How a round ended: with a call to make now, or where the next round starts (neither:
  /// conclude).
  struct round_end {
    std::optional<actors::decision> call;
    std::optional<std::int64_t> next_start;
  };

  round_end investigate(round_data& rd, walk_options wo, step_range investigation);
  triage_result walk(walk_options& wo, step_range investigation) const;
  [[nodiscard]] std::vector<std::pair<std::string, std::string>> frontier() const;
  std::optional<planned_call> settle(const triage_result& t, std::vector<hypothesis_group>& groups,
                                     step_range investigation, step_range global, bool may_call,
                                     bool may_backtrack);
  std::optional<actors::decision> assess(round_data& rd, walk_options wo, step_range investigation,
                                         bool may_call, bool may_backtrack);
  std::optional<actors::decision> sweep(const round_data& rd, walk_options wo,
                                        step_range investigation, std::int64_t tool_steps);
  round_end follow_up(round_data& rd, walk_options wo, step_range investigation, std::int64_t first,
                      int round);
  void remember(const round_data& rd);
  void drop_treated(std::vector<hypothesis_group>& groups) const;
  actors::decision remedy_call(const round_data& rd) const;
  actors::decision conclude() const;

  [[nodiscard]] std::int64_t first_remedy_after(std::int64_t step) const;
  [[nodiscard]] std::int64_t first_other_remedy(std::int64_t from,
                                                const std::set<std::string>& keys) const;
  [[nodiscard]] std::int64_t calls_after(std::int64_t step) const;

  const knowledge_base& kb_;
  const evidence_journal& journal_;
  const evidence& ev_;
  std::vector<conversation::constraint> constraints_; // set by the run's messages
  std::vector<conversation::directive> checks_first_; // asked for by the run's messages
  situation sit_;
  std::int64_t left_; // steps left in the budget
  std::deque<round_data> rounds_;
  std::set<std::string> known_;          // kind:target diagnosed by earlier rounds
  std::set<std::string> healthy_before_; // seen healthy by earlier rounds
  std::set<std::string> treated_;        // diagnosed (subject and target) by earlier rounds
};

actors::decision planner::decide() {
  std::int64_t start = 0;
  for (int k = 0;; ++k) {
    auto& rd = rounds_.emplace_back();
    rd.start = start;
    auto first = first_remedy_after(start);
    step_range investigation{start, first ? first - 1 : 0};
    walk_options wo;
    wo.global = {0, first ? first - 1 : 0};
    wo.known_healthy = healthy_before_;
    wo.treated = treated_;
    wo.frontier = frontier();
    auto end =
      first == 0 ? investigate(rd, wo, investigation) : follow_up(rd, wo, investigation, first, k);
    if (end.call)
      return *end.call;
    if (!end.next_start)
      return conclude();
    start = *end.next_start;
  }
}

/// Investigating: walk, then check what separates the hypotheses best; backtrack while a leaf
/// stays unexplained; once every group is decided, sweep for independent faults, then act on
/// the diagnoses.
planner::round_end planner::investigate(round_data& rd, walk_options wo, step_range investigation) {
  auto tool_steps = calls_after(rd.start);
  bool may_call = tool_steps < kb_.limits.investigate_steps && left_ > 2;
  wo.allow_calls = may_call;
  rd.t = walk(wo, investigation);
  if (!may_call && left_ > 2 && rd.t.leaves.size() > 1) {
    // Independent faults each need their own checks: the budget grows with the leaves.
    auto extra = kb_.limits.investigate_steps_per_extra_leaf *
                 static_cast<std::int64_t>(rd.t.leaves.size() - 1);
    may_call = tool_steps < kb_.limits.investigate_steps + extra;
    if (may_call) {
      wo.allow_calls = true; // walk again: the leaves' dependencies may be worth describing
      rd.t = walk(wo, investigation);
    }
  }
  if (rd.t.next)
    return {call(*rd.t.next, detail_json("triage", {}, rd.t, ev_, nullptr)), {}};
  // Backtracking may go on a little past the investigation's own limit.
  bool may_backtrack = left_ > kb_.limits.remedy_reserve_steps &&
                       tool_steps < kb_.limits.investigate_steps + kb_.limits.backtrack_steps;
  if (auto c = assess(rd, wo, investigation, may_call, may_backtrack))
    return {std::move(c), {}};
  if (may_call)
    if (auto d = sweep(rd, wo, investigation, tool_steps))
      return {std::move(d), {}};
  pick_diagnoses(rd, known_);
  if (!rd.diagnoses.empty() && left_ > 1) {
    rd.rem = remediate(sit_, rd.t, rd.diagnoses, rd.leaf_of);
    if (rd.rem.next)
      return {remedy_call(rd), {}};
  }
  return {};
}

/// A later round walks first from the frontier the earlier ones set aside; when nothing there is
/// anomalous and unexplained, from the alerted entities again.
triage_result planner::walk(walk_options& wo, step_range investigation) const {
  auto t = triage(sit_, investigation, wo);
  if (wo.frontier.empty() || t.next || !t.leaves.empty())
    return t;
  wo.frontier.clear();
  return triage(sit_, investigation, wo);
}

/// What the earlier rounds set aside and never observed, apart from what they treated.
std::vector<std::pair<std::string, std::string>> planner::frontier() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (auto& rd : rounds_)
    for (auto& p : rd.set_aside) {
      bool seen = std::any_of(rounds_.begin(), rounds_.end(),
                              [&](auto& r) { return r.t.classes.contains(p.first); });
      if (!seen && !treated_.contains(p.first) && !healthy_before_.contains(p.first) &&
          std::none_of(out.begin(), out.end(), [&](auto& o) { return o.first == p.first; }))
        out.push_back(p);
    }
  // An entity on a host an earlier round treated most likely suffered from that fault: last.
  auto on_treated = [&](const std::pair<std::string, std::string>& p) {
    auto* e = ev_.find(p.first);
    return e && std::any_of(e->hosts.begin(), e->hosts.end(),
                            [&](auto& h) { return treated_.contains(h); });
  };
  std::stable_partition(out.begin(), out.end(), [&](auto& p) { return !on_treated(p); });
  return out;
}

std::set<std::string> unexplained(const std::vector<hypothesis_group>& groups) {
  std::set<std::string> out;
  for (auto& g : groups)
    if (g.state == hypothesis_group::unknown)
      out.insert(g.leaf);
  return out;
}

/// The groups of a walk, decided: the leaves' own hypotheses first; for a leaf they leave
/// unexplained, the hosts under it (a common cause of several anomalies) too. A check that
/// separates them is returned to be made (only when `may_call`).
std::optional<planned_call> planner::settle(const triage_result& t,
                                            std::vector<hypothesis_group>& groups,
                                            step_range investigation, step_range global,
                                            bool may_call, bool may_backtrack) {
  groups = build_groups(sit_, t, investigation, global);
  drop_treated(groups);
  if (auto c = next_check(kb_, groups, may_call))
    return c;
  auto open = unexplained(groups);
  if (open.empty())
    return std::nullopt;
  auto widened = build_groups(sit_, t, investigation, global, open);
  drop_treated(widened);
  auto c = next_check(kb_, widened, may_backtrack);
  if (c)
    c->why = "backtrack to the hosts under " + *open.begin() + ": " + c->why;
  groups = std::move(widened);
  return c;
}

/// Decides the round's groups, backtracking while a leaf stays unexplained: to the hosts under
/// it, then to the siblings the walk deferred. A call to make now, or nothing (decided).
std::optional<actors::decision> planner::assess(round_data& rd, walk_options wo,
                                                step_range investigation, bool may_call,
                                                bool may_backtrack) {
  auto phase = [&](const planned_call& c, const char* ph) {
    auto d = call(c, detail_json(ph, rd.groups, rd.t, ev_, nullptr));
    d.thought = fmt::format("{} — hypotheses: {}", d.thought, ranking(rd.groups));
    return d;
  };
  if (auto c = settle(rd.t, rd.groups, investigation, wo.global, may_call, may_backtrack))
    return phase(*c, "investigate");
  if (unexplained(rd.groups).empty() || rd.t.deferred.empty())
    return std::nullopt;
  wo.sweep = true;
  wo.allow_calls = may_backtrack;
  auto wider = triage(sit_, investigation, wo);
  if (wider.next) {
    wider.next->why = "backtrack: a leaf is unexplained; " + wider.next->why;
    return call(*wider.next, detail_json("triage", rd.groups, rd.t, ev_, nullptr));
  }
  std::vector<hypothesis_group> groups;
  auto c = settle(wider, groups, investigation, wo.global, may_backtrack, may_backtrack);
  rd.t = std::move(wider);
  rd.groups = std::move(groups);
  if (c)
    return phase(*c, "investigate");
  return std::nullopt;
}

/// Every group is decided: look at the deferred siblings for independent faults while there is
/// room left for remedies and their verification.
std::optional<actors::decision> planner::sweep(const round_data& rd, walk_options wo,
                                               step_range investigation, std::int64_t tool_steps) {
  if (rd.t.deferred.empty() ||
      tool_steps + kb_.limits.remedy_reserve_steps >= kb_.limits.investigate_steps)
    return std::nullopt;
  wo.allow_calls = wo.sweep = true;
  auto swept = triage(sit_, investigation, wo);
  if (!swept.next)
    return std::nullopt;
  swept.next->why = "sweep: " + swept.next->why;
  return call(*swept.next, detail_json("triage", rd.groups, rd.t, ev_, nullptr));
}

/// The round has acted: its diagnoses are what its investigation decided; its remedies and
/// their verification go on, or a later round starts.
planner::round_end planner::follow_up(round_data& rd, walk_options wo, step_range investigation,
                                      std::int64_t first, int round) {
  wo.allow_calls = false;
  rd.t = walk(wo, investigation);
  keep_set_aside(rd, rd.t);
  (void)assess(rd, wo, investigation, false, false);
  keep_set_aside(rd, rd.t);
  pick_diagnoses(rd, known_);
  // A remedy call none of this round's diagnoses makes began the next round: this round's
  // remedies and verification are judged on the steps before it.
  auto next_first = first_other_remedy(first, remedy_keys(sit_, rd.diagnoses));
  if (next_first) {
    auto bounded = journal_.before(next_first);
    rd.rem =
      remediate({kb_, bounded, sit_.tools, sit_.r, &constraints_}, rd.t, rd.diagnoses, rd.leaf_of);
  } else {
    rd.rem = remediate(sit_, rd.t, rd.diagnoses, rd.leaf_of);
    if (rd.rem.next && left_ > 0)
      return {remedy_call(rd), {}};
  }
  remember(rd);
  auto last = rd.rem.last_action ? rd.rem.last_action : first;
  if (next_first)
    return {{}, std::min(last, next_first - 1)};
  // Verified, or out of rounds or budget: conclude. Otherwise the alerted entities are still
  // anomalous: go back to triage over what the remedies left.
  if (rd.rem.still_anomalous.empty() || round + 1 >= kb_.limits.max_rounds ||
      left_ <= kb_.limits.remedy_reserve_steps || rd.diagnoses.empty())
    return {};
  return {{}, last};
}

/// An earlier round diagnosed and treated these causes, and the alerted entities stayed
/// anomalous: what is left to explain has another cause, so they no longer compete.
void planner::drop_treated(std::vector<hypothesis_group>& groups) const {
  for (auto& g : groups)
    std::erase_if(g.hyps, [&](const hypothesis& h) {
      return !h.target.empty() && known_.contains(h.mode->kind + ":" + h.target);
    });
}

/// What a finished round tells the next: its diagnoses, and what it saw healthy.
void planner::remember(const round_data& rd) {
  for (auto* h : rd.diagnoses) {
    known_.insert(h->mode->kind + ":" + h->target);
    treated_.insert(h->subject);
    treated_.insert(h->target);
  }
  healthy_before_.insert(rd.t.healthy.begin(), rd.t.healthy.end());
  for (auto& [name, cls] : rd.t.classes)
    if (!cls.empty())
      healthy_before_.erase(name);
}

actors::decision planner::remedy_call(const round_data& rd) const {
  auto phase = rd.rem.next->remedy ? "remediate" : "verify";
  return call(*rd.rem.next, detail_json(phase, rd.groups, rd.t, ev_, nullptr));
}

/// The conclusion gathers every round.
actors::decision planner::conclude() const {
  auto f = gather(rounds_);
  auto& v = f.v;
  v.remediation = &f.rem;
  v.recovery = recovery_of(f, rounds_);
  if (!v.diagnoses.empty())
    v.outcome = "diagnosed";
  else if (f.t.leaves.empty())
    v.outcome = "no_fault_found";
  else
    v.outcome = "unknown_cause";
  v.summary = summarize(v, f.groups, f.t);

  actors::decision d;
  d.kind = actors::decision::conclude;
  d.conclusion = v.summary;
  d.thought = v.outcome == "diagnosed"        ? fmt::format("concluding: {}", ranking(f.groups))
              : v.outcome == "no_fault_found" ? std::string{"nothing is anomalous after triage"}
                                              : std::string{"anomalies remain that no failure "
                                                            "mode of the knowledge base explains"};
  d.detail = detail_json("conclude", f.groups, f.t, ev_, &v);
  return d;
}

std::int64_t planner::first_remedy_after(std::int64_t step) const {
  for (auto& c : ev_.calls)
    if (c.step > step && c.mutation)
      return c.step;
  return 0;
}

std::int64_t planner::first_other_remedy(std::int64_t from,
                                         const std::set<std::string>& keys) const {
  for (auto& c : ev_.calls)
    if (c.step >= from && c.mutation && !keys.contains(c.key))
      return c.step;
  return 0;
}

std::int64_t planner::calls_after(std::int64_t step) const {
  return static_cast<std::int64_t>(std::count_if(
    ev_.calls.begin(), ev_.calls.end(), [&](const call_record& c) { return c.step > step; }));
}

} // namespace

actors::decision decide(const knowledge_base& kb, const actors::run_context& ctx) {
  evidence_journal fresh;
  auto& journal = journal_of(ctx, fresh);
  journal.catch_up(ctx.steps, ctx.tools);
  toolbox tools{ctx.tools};
  return planner{kb, ctx, journal, tools}.decide();
}

} // namespace sreh::plugins::reasoner
