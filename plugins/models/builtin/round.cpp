#include "plugins/models/builtin/round.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace sreh::plugins::reasoner {

namespace {

template <class T>
void append_unique(std::vector<T>& dst, const std::vector<T>& src) {
  for (auto& x : src)
    if (std::find(dst.begin(), dst.end(), x) == dst.end())
      dst.push_back(x);
}

void add_remedies(findings& f, const round_data& rd) {
  for (std::size_t i = 0; i < rd.diagnoses.size(); ++i) {
    f.v.diagnoses.push_back(rd.diagnoses[i]);
    f.v.ambiguous.push_back(rd.ambiguous[i]);
  }
  f.rem.records.insert(f.rem.records.end(), rd.rem.records.begin(), rd.rem.records.end());
  f.rem.notes.insert(f.rem.notes.end(), rd.rem.notes.begin(), rd.rem.notes.end());
  for (auto& [what, ok] : rd.rem.mitigated)
    f.rem.mitigated[what] = ok;
  for (auto& [what, how] : rd.rem.recovery)
    f.rem.recovery[what] = how;
  f.rem.partial.insert(rd.rem.partial.begin(), rd.rem.partial.end());
  f.rem.last_action = std::max(f.rem.last_action, rd.rem.last_action);
}

void add_earlier_round(findings& f, const round_data& rd) {
  for (auto& g : rd.groups)
    if (g.state == hypothesis_group::diagnosed)
      f.groups.push_back(g);
  append_unique(f.t.leaves, rd.t.leaves);
  append_unique(f.t.off_path, rd.t.off_path);
  append_unique(f.t.unobservable, rd.t.unobservable);
  for (auto& [n, c] : rd.t.classes)
    f.t.classes.try_emplace(n, c);
}

/// The observations of every round in order; the remedies count as mitigating once the last
/// round's left the alerted entities healthy.
void add_round_notes(findings& f, const std::deque<round_data>& rounds) {
  std::vector<fact> obs;
  for (std::size_t i = 0; i + 1 < rounds.size(); ++i)
    obs.insert(obs.end(), rounds[i].t.observations.begin(), rounds[i].t.observations.end());
  obs.push_back({0,
                 fmt::format("round {}: the alerted entities stayed anomalous after the "
                             "remedies; triage again",
                             rounds.size()),
                 0});
  obs.insert(obs.end(), f.t.observations.begin(), f.t.observations.end());
  f.t.observations = std::move(obs);
  auto& last = rounds.back();
  if (last.rem.last_action > 0 && last.rem.still_anomalous.empty()) {
    for (auto& [what, ok] : f.rem.mitigated)
      ok = true;
    f.rem.notes.push_back(
      fmt::format("after {} rounds of remedies the alerted entities recovered", rounds.size()));
  }
}

} // namespace

void keep_set_aside(round_data& rd, const triage_result& t) {
  for (auto& d : t.deferred) {
    bool seen = t.classes.contains(d) ||
                std::find(t.healthy.begin(), t.healthy.end(), d) != t.healthy.end() ||
                std::find(t.unobservable.begin(), t.unobservable.end(), d) != t.unobservable.end();
    bool kept =
      std::any_of(rd.set_aside.begin(), rd.set_aside.end(), [&](auto& p) { return p.first == d; });
    if (!seen && !kept)
      rd.set_aside.emplace_back(d, t.deferred_by.contains(d) ? t.deferred_by.at(d) : "");
  }
}

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

findings gather(const std::deque<round_data>& rounds) {
  findings f;
  auto& last = rounds.back();
  f.t = last.t;
  for (auto& rd : rounds) {
    add_remedies(f, rd);
    if (&rd != &last)
      add_earlier_round(f, rd);
  }
  f.groups.insert(f.groups.end(), last.groups.begin(), last.groups.end());
  if (rounds.size() > 1)
    add_round_notes(f, rounds);
  return f;
}

std::string recovery_of(const findings& f, const std::deque<round_data>& rounds) {
  std::string out = "none";
  for (auto& [what, how] : f.rem.recovery) {
    if (how == "not_recovered" && !f.rem.mitigated.at(what))
      return how;
    if (how == "partial" || out == "none")
      out = how == "not_recovered" ? "recovered" : how;
  }
  if (out == "recovered" && !rounds.back().rem.still_anomalous.empty())
    out = "partial";
  return out;
}

} // namespace sreh::plugins::reasoner
