#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <regex>

#include "core/base/json.hpp"
#include "plugins/models/builtin/engine.hpp"

namespace sreh::plugins::reasoner {

double hypothesis::confidence() const {
  if (max_score <= 0)
    return 0;
  return std::round(std::clamp(score / max_score, 0.0, 1.0) * 100) / 100;
}

bool hypothesis::seen(const std::string& symptom_id) const {
  return std::any_of(symptoms.begin(), symptoms.end(), [&](const symptom_eval& e) {
    return e.s->id == symptom_id && e.state == seen_state::seen;
  });
}

namespace {

void complete_bindings(const evidence& ev, step_range r, hypothesis& h) {
  h.bindings["subject"] = h.subject;
  if (h.mode->target == "$subject") {
    h.target = h.subject;
  } else {
    auto it = h.bindings.find(h.mode->target.substr(1));
    h.target = it == h.bindings.end() ? std::string{} : it->second;
  }
  if (!h.target.empty())
    h.bindings["target"] = h.target;
  if (auto* e = ev.find(h.subject)) {
    for (const char* f : {"replicas", "max_connections"}) {
      for (auto it = e->snapshots.rbegin(); it != e->snapshots.rend(); ++it)
        if (auto v = it->fields.find(f); r.contains(it->step) && v != it->fields.end()) {
          h.bindings[f] = fmt::format("{:g}", v->second);
          break;
        }
    }
  }
  if (auto* e = ev.find(h.subject); e && h.bindings.contains("replicas")) {
    auto replicas = std::stod(h.bindings["replicas"]);
    auto rps = current_value(*e, "rps", r);
    auto base = baseline_value(*e, "rps", r);
    double factor = rps && base && *base > 0 ? *rps / *base * 1.25 : 2.0;
    auto want = std::min(100.0, std::ceil(replicas * std::max(2.0, factor)));
    h.bindings["replicas_for_load"] = fmt::format("{:g}", want);
  }
  if (auto it = h.bindings.find("flag"); it != h.bindings.end() && ev.flags)
    for (auto& f : *ev.flags)
      if (f.name == it->second)
        h.bindings["flag_default"] = f.default_value.empty() ? "false" : f.default_value;
}

hypothesis score(const situation& sit, step_range r, step_range g, const failure_mode& m,
                 const std::string& subject, const std::vector<goal_cue>& cues) {
  const auto& kb = sit.kb;
  hypothesis h;
  h.mode = &m;
  h.subject = subject;
  for (auto& s : m.symptoms) {
    h.max_score += std::max(0.0, s.weight);
    h.symptoms.push_back(judge_symptom(sit, r, g, h, s));
  }
  for (auto& c : cues) {
    auto weight = !c.prior() ? kb.limits.goal_cue_weight : kb.limits.memory_cue_weight;
    if (c.mode == &m && weight != 0) {
      h.score += weight;
      h.max_score += std::max(0.0, weight);
      h.evidence.push_back({0, c.said(), weight});
    }
  }
  complete_bindings(sit.ev, r, h);
  return h;
}

/// Entities named in the leaf's warning and error logs (a caller names the dependency it fails on).
std::vector<std::string> implicated(const evidence& ev, const std::string& leaf, step_range r) {
  std::vector<std::string> out;
  auto* lr = latest_logs(ev, leaf, r);
  if (!lr)
    return out;
  for (auto& name : ev.order) {
    if (name == leaf)
      continue;
    std::regex re("(^|[^A-Za-z0-9_.-])" + regex_escape(name) + "($|[^A-Za-z0-9_-])");
    for (auto& line : lr->lines)
      if (std::regex_search(line.message, re)) {
        out.push_back(name);
        break;
      }
  }
  return out;
}

/// How many of the walk's unexplained anomalous entities (leaves, off the path) run on `host`.
std::size_t unexplained_on(const evidence& ev, const triage_result& t, const std::string& host) {
  std::size_t n = 0;
  for (auto* list : {&t.leaves, &t.off_path})
    for (auto& name : *list)
      if (auto* e = ev.find(name);
          e && std::find(e->hosts.begin(), e->hosts.end(), host) != e->hosts.end())
        ++n;
  return n;
}

/// A host under several anomalous entities is a common cause of its own: its hypotheses get
/// `common_cause_weight` per further anomalous entity it carries.
void common_cause(const situation& sit, const triage_result& t, hypothesis& h) {
  auto* host = sit.ev.find(h.subject);
  if (!host || host->kind != "host" || sit.kb.limits.common_cause_weight == 0)
    return;
  std::vector<std::string> on;
  for (auto& [name, cls] : t.classes)
    if (!cls.empty())
      if (auto* e = sit.ev.find(name);
          e && std::find(e->hosts.begin(), e->hosts.end(), h.subject) != e->hosts.end())
        on.push_back(name);
  if (on.size() < 2)
    return;
  std::string names;
  for (auto& n : on)
    names += (names.empty() ? "" : ", ") + n;
  auto w = sit.kb.limits.common_cause_weight * static_cast<double>(on.size() - 1);
  h.score += w;
  h.max_score += w;
  h.evidence.push_back(
    {0, fmt::format("{} carries {} anomalous entities: {}", h.subject, on.size(), names), w});
}

/// False when the subject is observed but has none of the metrics the mode's own metric
/// symptoms read (a host without GPUs for a GPU fault): the mode does not apply to it.
bool measurable(const evidence& ev, const hypothesis& h, step_range r) {
  auto* e = ev.find(h.subject);
  if (!e || !observed(*e, r))
    return true;
  bool any = false;
  for (auto& se : h.symptoms) {
    if (se.s->type != symptom_type::metric || se.s->on != scope::self)
      continue;
    any = true;
    for (auto& c : se.s->when.all)
      if (current_value(*e, c.metric, r))
        return true;
  }
  return !any;
}

/// True when reading the logs of `name` failed within the range.
bool logs_failed(const situation& sit, const std::string& name, step_range r) {
  auto call = sit.tools.logs(name, kind_of(sit.ev, name));
  if (!call)
    return false;
  auto key = call_key(call->tool, call->args);
  return std::any_of(sit.ev.calls.begin(), sit.ev.calls.end(), [&](const call_record& c) {
    return c.key == key && !c.ok && r.contains(c.step);
  });
}

} // namespace

std::vector<hypothesis_group> build_groups(const situation& sit, const triage_result& t,
                                           step_range r, step_range g,
                                           const std::set<std::string>& widen) {
  const auto& ev = sit.ev;
  std::vector<hypothesis_group> groups;
  for (auto& leaf : t.leaves) {
    hypothesis_group grp;
    grp.leaf = leaf;
    std::vector<std::string> subjects{leaf};
    auto add = [&](const std::string& s) {
      if (std::find(subjects.begin(), subjects.end(), s) == subjects.end())
        subjects.push_back(s);
    };
    // The leaf's hosts are suspects when its logs name them (write errors name the device's
    // host), or when its logs cannot be read at all.
    // When nothing of the leaf's own explains it (`widen`), the hosts under it are suspects too.
    // So is a host under several unexplained anomalies: a common cause.
    auto named = implicated(ev, leaf, r);
    if (auto* e = ev.find(leaf))
      for (auto& h : e->hosts)
        if (logs_failed(sit, leaf, r) || widen.contains(leaf) || unexplained_on(ev, t, h) >= 2)
          add(h);
    for (auto& n : named)
      add(n);
    for (auto& m : sit.kb.modes)
      for (auto& s : subjects) {
        auto k = kind_of(ev, s);
        if (std::find(m.applies_to.begin(), m.applies_to.end(), k) == m.applies_to.end())
          continue;
        auto h = score(sit, r, g, m, s, t.cues);
        if (!measurable(ev, h, r))
          continue;
        common_cause(sit, t, h);
        grp.hyps.push_back(std::move(h));
      }
    std::vector<std::size_t> idx(grp.hyps.size());
    for (std::size_t i = 0; i < idx.size(); ++i)
      idx[i] = i;
    std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) {
      return grp.hyps[a].score > grp.hyps[b].score;
    });
    std::vector<hypothesis> sorted;
    for (auto i : idx)
      sorted.push_back(std::move(grp.hyps[i]));
    grp.hyps = std::move(sorted);
    groups.push_back(std::move(grp));
  }
  return groups;
}

namespace {

const hypothesis* leader_of(const hypothesis_group& g) {
  for (auto& h : g.hyps)
    if (!h.target.empty())
      return &h;
  return nullptr;
}

double runner_up(const hypothesis_group& g, const hypothesis* leader) {
  double best = 0;
  bool any = false;
  for (auto& h : g.hyps)
    if (&h != leader && (!any || h.score > best)) {
      best = h.score;
      any = true;
    }
  return any ? std::max(best, 0.0) : 0.0;
}

} // namespace

std::optional<planned_call> next_check(const knowledge_base& kb,
                                       std::vector<hypothesis_group>& groups, bool may_check) {
  struct candidate {
    planned_call call;
    double gain = 0;
    std::vector<std::string> about;
  };
  std::vector<candidate> cands;
  for (auto& g : groups) {
    if (g.state != hypothesis_group::open)
      continue;
    auto* lead = leader_of(g);
    // A clear leader is confirmed before it is acted on: its own open checks come first (they
    // also bind what its remedy needs, such as a flag's default).
    bool lead_complete =
      lead && std::none_of(lead->symptoms.begin(), lead->symptoms.end(), [](const symptom_eval& e) {
        return e.state == seen_state::unknown && e.check;
      });
    if (lead && lead_complete && lead->score >= kb.limits.conclude_score &&
        lead->score - runner_up(g, lead) >= kb.limits.conclude_margin) {
      g.state = hypothesis_group::diagnosed;
      continue;
    }
    // p(h) ∝ exp(score / 2): checks about the leading hypotheses weigh most.
    double top = g.hyps.empty() ? 0 : g.hyps.front().score, z = 0;
    for (auto& h : g.hyps)
      z += std::exp((h.score - top) / 2);
    bool has_checks = false;
    for (auto& h : g.hyps) {
      double p = std::exp((h.score - top) / 2) / z;
      for (auto& se : h.symptoms) {
        if (se.state != seen_state::unknown || !se.check)
          continue;
        has_checks = true;
        auto key = call_key(se.check->tool, se.check->args);
        auto it = std::find_if(cands.begin(), cands.end(), [&](const candidate& c) {
          return call_key(c.call.tool, c.call.args) == key;
        });
        if (it == cands.end()) {
          cands.push_back({*se.check, 0, {}});
          it = std::prev(cands.end());
        }
        it->gain += p * std::abs(se.s->weight - se.s->absent_weight);
        auto label = fmt::format("{}({}) {:g}", h.mode->kind, h.subject, h.score);
        if (std::find(it->about.begin(), it->about.end(), label) == it->about.end())
          it->about.push_back(label);
      }
    }
    if (!has_checks || !may_check) {
      // Nothing left to separate the hypotheses: decide with what is known.
      if (lead && lead->score >= kb.limits.conclude_score) {
        g.state = hypothesis_group::diagnosed;
        g.ambiguous = lead->score - runner_up(g, lead) < kb.limits.conclude_margin;
      } else {
        g.state = hypothesis_group::unknown;
      }
    }
  }
  if (!may_check || cands.empty())
    return std::nullopt;
  auto best = std::max_element(cands.begin(), cands.end(), [](auto& a, auto& b) {
    return a.gain < b.gain; // max_element keeps the first of equals: deterministic
  });
  auto c = best->call;
  c.gain = std::round(best->gain * 100) / 100;
  std::string about;
  for (std::size_t i = 0; i < best->about.size() && i < 4; ++i)
    about += (i ? ", " : "") + best->about[i];
  c.why = fmt::format("expected information gain {:g}: bears on {}", c.gain, about);
  return c;
}

} // namespace sreh::plugins::reasoner

namespace sreh::plugins::reasoner {

self_probe probe_self(const situation& sit, const std::string& name, step_range r, step_range g,
                      const std::vector<goal_cue>& cues) {
  const auto& kb = sit.kb;
  const auto& ev = sit.ev;
  self_probe out;
  auto kind = kind_of(ev, name);
  std::vector<hypothesis> hyps;
  for (auto& m : kb.modes)
    if (std::find(m.applies_to.begin(), m.applies_to.end(), kind) != m.applies_to.end())
      hyps.push_back(score(sit, r, g, m, name, cues));
  // The cued modes' global checks (a recent deploy of the suspect, a recent flag change), the
  // most specific cue first: one cheap call instead of a description per dependency.
  bool global_seen = false;
  for (auto& c : cues)
    for (auto& h : hyps) {
      if (h.mode != c.mode)
        continue;
      for (auto& se : h.symptoms) {
        if (se.s->on != scope::self ||
            (se.s->type != symptom_type::deploy && se.s->type != symptom_type::flag))
          continue;
        if (se.state == seen_state::seen)
          global_seen = true;
        else if (se.state == seen_state::unknown && se.check && !global_seen && !out.next) {
          out.next = *se.check;
          out.next->why =
            fmt::format("{}: is {} behind {}'s anomaly?", c.said(), c.mode->kind, name);
        }
      }
    }
  if (!global_seen)
    return out; // a cued check is still open (out.next), or nothing the goal cues applies here
  out.next.reset();
  // A cued change is seen: the suspect's own logs tell whether it explains itself.
  if (!latest_logs(ev, name, r)) {
    auto call = sit.tools.logs(name, kind);
    if (call && !attempted(ev, *call, r)) {
      call->why = fmt::format("a recent change may explain {} by itself: read its logs before "
                              "describing each of its dependencies",
                              name);
      out.next = call;
      return out;
    }
  }
  std::stable_sort(hyps.begin(), hyps.end(),
                   [](const hypothesis& a, const hypothesis& b) { return a.score > b.score; });
  const hypothesis* lead = nullptr;
  for (auto& h : hyps)
    if (!h.target.empty()) {
      lead = &h;
      break;
    }
  if (!lead)
    return out;
  bool complete =
    std::none_of(lead->symptoms.begin(), lead->symptoms.end(),
                 [](const symptom_eval& e) { return e.state == seen_state::unknown && e.check; });
  double second = 0;
  for (auto& h : hyps)
    if (&h != lead)
      second = std::max(second, h.score);
  out.self_explained = complete && lead->score >= kb.limits.conclude_score &&
                       lead->score - second >= kb.limits.conclude_margin;
  if (out.self_explained)
    out.why = fmt::format("{}({}) scores {:g}", lead->mode->kind, name, lead->score);
  return out;
}

} // namespace sreh::plugins::reasoner
