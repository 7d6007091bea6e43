#include "plugins/models/builtin/report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>

#include "core/base/json.hpp"
#include "core/base/json_object.hpp"

namespace sreh::plugins::reasoner {

namespace {

double round2(double x) {
  return std::round(x * 100) / 100;
}

/// Writes `xs` as an array of the strings `text` makes of them.
template <class Range, class Text = std::identity>
void write_strings(json::writer& w, const Range& xs, Text text = {}) {
  w.StartArray();
  for (auto& x : xs)
    w.String(std::invoke(text, x).c_str());
  w.EndArray();
}

/// Why triage found `leaf` anomalous: "class (why); class (why)".
std::string classes_of(const triage_result& t, const std::string& leaf) {
  auto it = t.classes.find(leaf);
  return it == t.classes.end() ? std::string{} : classes_text(it->second);
}

/// The kind, target and subject of a hypothesis (the first members of its object).
void write_identity(json::writer& w, const hypothesis& h) {
  w.Key("kind");
  w.String(h.mode->kind.c_str());
  w.Key("target");
  w.String(h.target.c_str());
  w.Key("subject");
  w.String(h.subject.c_str());
}

void write_fact(json::writer& w, const fact& f) {
  w.StartObject();
  w.Key("step");
  w.Int64(f.step);
  w.Key("fact");
  w.String(f.text.c_str());
  w.Key("weight");
  w.Double(round2(f.weight));
  w.EndObject();
}

void write_bindings(json::writer& w, const hypothesis& h) {
  w.StartObject();
  for (auto& [k, v] : h.bindings) {
    if (k == "subject" || k == "target")
      continue;
    w.Key(k.c_str());
    w.String(v.c_str());
  }
  w.EndObject();
}

void write_hypothesis(json::writer& w, const hypothesis& h, const char* status) {
  w.StartObject();
  write_identity(w, h);
  w.Key("score");
  w.Double(round2(h.score));
  w.Key("confidence");
  w.Double(h.confidence());
  w.Key("status");
  w.String(status);
  w.Key("evidence");
  w.StartArray();
  for (auto& f : h.evidence)
    write_fact(w, f);
  w.EndArray();
  w.EndObject();
}

std::vector<std::string> observations(const triage_result& t, const evidence& ev) {
  std::vector<std::string> out;
  for (auto& o : t.observations)
    out.push_back(o.step ? fmt::format("step {}: {}", o.step, o.text) : o.text);
  for (auto& u : t.unobservable)
    out.push_back(fmt::format("{} could not be observed (its description failed)", u));
  for (auto& c : ev.calls)
    if (!c.ok)
      out.push_back(fmt::format("step {}: {} failed: {}", c.step, c.tool,
                                c.error.empty() ? "no detail" : c.error));
  return out;
}

/// Herrings and discarded explanations, with the evidence that rules them out.
void write_ruled_out(json::writer& w, const std::vector<hypothesis_group>& groups,
                     const triage_result& t, const evidence& ev) {
  w.StartArray();
  for (auto& g : groups)
    for (auto& h : g.hyps) {
      if (h.score >= 0)
        continue;
      auto worst = std::min_element(h.evidence.begin(), h.evidence.end(),
                                    [](auto& a, auto& b) { return a.weight < b.weight; });
      w.StartObject();
      w.Key("kind");
      w.String(h.mode->kind.c_str());
      w.Key("target");
      w.String(h.target.empty() ? h.subject.c_str() : h.target.c_str());
      w.Key("reason");
      w.String(worst == h.evidence.end()
                 ? "score below zero"
                 : fmt::format("step {}: {}", worst->step, worst->text).c_str());
      w.EndObject();
    }
  for (auto& n : t.off_path) {
    w.StartObject();
    w.Key("target");
    w.String(n.c_str());
    w.Key("reason");
    w.String(
      "anomalous, but its anomaly does not explain its callers' symptoms (off the failing path)");
    w.EndObject();
  }
  for (auto& d : ev.deploys)
    for (auto& x : d.deploys) {
      if (std::find(t.healthy.begin(), t.healthy.end(), x.service) == t.healthy.end())
        continue;
      w.StartObject();
      w.Key("kind");
      w.String("deploy");
      w.Key("target");
      w.String(x.service.c_str());
      w.Key("reason");
      w.String(fmt::format("step {}: {} {} deployed at {}, but {} is healthy", d.step, x.service,
                           x.version, x.at, x.service)
                 .c_str());
      w.EndObject();
    }
  w.EndArray();
}

void write_diagnoses(json::writer& w, const verdict& v) {
  w.StartArray();
  for (std::size_t i = 0; i < v.diagnoses.size(); ++i) {
    auto* h = v.diagnoses[i];
    w.StartObject();
    write_identity(w, *h);
    w.Key("bindings");
    write_bindings(w, *h);
    w.Key("confidence");
    w.Double(v.ambiguous[i] ? round2(h->confidence() * 0.7) : h->confidence());
    w.Key("ambiguous");
    w.Bool(v.ambiguous[i]);
    w.Key("evidence");
    w.StartArray();
    for (auto& f : h->evidence)
      write_fact(w, f);
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
}

void write_remediation(json::writer& w, const verdict& v) {
  w.StartArray();
  if (v.remediation)
    for (auto& r : v.remediation->records) {
      w.StartObject();
      w.Key("tool");
      w.String(r.tool.c_str());
      w.Key("args");
      json::raw(w, r.args);
      w.Key("step");
      w.Int64(r.step);
      w.Key("ok");
      w.Bool(r.ok);
      w.Key("verified");
      w.Bool(r.verified);
      w.Key("for");
      w.String(r.for_what.c_str());
      w.EndObject();
    }
  w.EndArray();
}

/// The past cases the run was shown and whether the conclusion bore out the failure mode each
/// names (null when it names none): a misleading memory is on record as one.
void write_memories(json::writer& w, const verdict& v, const evidence& ev) {
  w.StartArray();
  std::set<std::string> seen;
  for (const auto& m : ev.memories) {
    if (!seen.insert(m.c.id).second)
      continue;
    auto f = m.c.labels.find("fault");
    w.StartObject();
    json::fields(w, "id", m.c.id, "version", m.c.version, "step", m.step, "score", m.c.score);
    w.Key("fault");
    if (f == m.c.labels.end()) {
      w.Null();
      w.Key("borne_out");
      w.Null();
    } else {
      w.String(f->second.c_str());
      w.Key("borne_out");
      w.Bool(std::any_of(v.diagnoses.begin(), v.diagnoses.end(),
                         [&](const hypothesis* h) { return h->mode->kind == f->second; }));
    }
    w.EndObject();
  }
  w.EndArray();
}

void write_result(json::writer& w, const verdict& v, const std::vector<hypothesis_group>& groups,
                  const triage_result& t, const evidence& ev) {
  w.StartObject();
  w.Key("detected");
  w.Bool(v.outcome != "no_fault_found");
  w.Key("outcome");
  w.String(v.outcome.c_str());
  w.Key("localized");
  write_strings(
    w, v.diagnoses, [](const hypothesis* h) -> auto& { return h->target; });
  w.Key("root_cause");
  write_strings(
    w, v.diagnoses, [](const hypothesis* h) -> auto& { return h->mode->kind; });
  w.Key("diagnoses");
  write_diagnoses(w, v);
  w.Key("remediation");
  write_remediation(w, v);
  w.Key("recovery");
  w.String(v.recovery.c_str());
  w.Key("ruled_out");
  write_ruled_out(w, groups, t, ev);
  w.Key("memories");
  write_memories(w, v, ev);
  w.Key("unexplained");
  std::vector<std::string> unexplained;
  for (auto& g : groups)
    if (g.state == hypothesis_group::unknown)
      unexplained.push_back(fmt::format("{}: {}", g.leaf, classes_of(t, g.leaf)));
  write_strings(w, unexplained);
  w.Key("notes");
  static const std::vector<std::string> no_notes;
  write_strings(w, v.remediation ? v.remediation->notes : no_notes);
  w.Key("summary");
  w.String(v.summary.c_str());
  w.EndObject();
}

/// The hypotheses of a group that the evidence ruled out, for the summary.
std::string ruled_out_text(const hypothesis_group& g) {
  std::string out;
  for (auto& h : g.hyps)
    if (h.score < 0)
      out += fmt::format("{}{}({})", out.empty() ? "" : ", ", h.mode->kind, h.subject);
  return out.empty() ? std::string{"none"} : out;
}

/// The strongest supporting fact of a diagnosis, for the one-line summary.
std::string key_fact(const hypothesis& h) {
  auto best = std::max_element(h.evidence.begin(), h.evidence.end(),
                               [](auto& a, auto& b) { return a.weight < b.weight; });
  return best == h.evidence.end() ? std::string{} : best->text;
}

} // namespace

std::string detail_json(const std::string& phase, const std::vector<hypothesis_group>& groups,
                        const triage_result& t, const evidence& ev, const verdict* v) {
  rapidjson::StringBuffer buf;
  json::writer w(buf);
  w.StartObject();
  w.Key("phase");
  w.String(phase.c_str());
  w.Key("focus");
  write_strings(w, t.focus);
  w.Key("leaves");
  write_strings(w, t.leaves);
  w.Key("hypotheses");
  w.StartArray();
  for (auto& g : groups)
    for (std::size_t i = 0; i < g.hyps.size() && i < 6; ++i) {
      auto& h = g.hyps[i];
      const char* status = h.score < 0                                        ? "ruled_out"
                           : i == 0 && g.state == hypothesis_group::diagnosed ? "leading"
                                                                              : "candidate";
      write_hypothesis(w, h, status);
    }
  w.EndArray();
  w.Key("observations");
  write_strings(w, observations(t, ev));
  if (v) {
    w.Key("result");
    write_result(w, *v, groups, t, ev);
  }
  w.EndObject();
  return buf.GetString();
}

std::string summarize(const verdict& v, const std::vector<hypothesis_group>& groups,
                      const triage_result& t) {
  if (v.outcome == "no_fault_found") {
    std::string seen;
    for (auto& n : t.healthy)
      seen += (seen.empty() ? "" : ", ") + n;
    return fmt::format("no fault found: {} within baseline",
                       seen.empty() ? "nothing observed" : seen);
  }
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < v.diagnoses.size(); ++i) {
    auto* h = v.diagnoses[i];
    auto what = h->mode->kind + ":" + h->target;
    std::string s = fmt::format("{}: {}{} ({})", h->target, h->mode->kind,
                                v.ambiguous[i] ? " (low margin)" : "", key_fact(*h));
    if (v.remediation) {
      for (auto& r : v.remediation->records)
        if (r.for_what == what)
          s += fmt::format("; {} {} at step {}{}", r.tool, r.args, r.step,
                           !r.ok        ? " failed"
                           : r.verified ? ", verified"
                                        : "");
      auto m = v.remediation->mitigated.find(what);
      if (m != v.remediation->mitigated.end() && !m->second)
        s += "; not mitigated";
      else if (auto rc = v.remediation->recovery.find(what);
               rc != v.remediation->recovery.end() && rc->second == "partial")
        s += "; partially recovered";
    }
    parts.push_back(std::move(s));
  }
  for (auto& g : groups)
    if (g.state == hypothesis_group::unknown) {
      auto cls = classes_of(t, g.leaf);
      std::string best = g.hyps.empty() ? std::string{"none"}
                                        : fmt::format("{}({}) scored {:g}", g.hyps[0].mode->kind,
                                                      g.hyps[0].subject, g.hyps[0].score);
      parts.push_back(fmt::format("unknown cause: {} is anomalous ({}); no failure mode of the "
                                  "knowledge base fits (best: {}; ruled out: {})",
                                  g.leaf, cls, best, ruled_out_text(g)));
    }
  if (v.outcome == "unknown_cause" && !t.off_path.empty()) {
    std::string off;
    for (auto& n : t.off_path)
      off += (off.empty() ? "" : ", ") + n;
    parts.push_back("anomalous off the failing path: " + off);
  }
  std::string out;
  for (auto& p : parts)
    out += (out.empty() ? "" : " | ") + p;
  if (v.remediation)
    for (auto& n : v.remediation->notes)
      if (n.rfind("after ", 0) != 0)
        out += "; " + n;
  return out;
}

} // namespace sreh::plugins::reasoner
