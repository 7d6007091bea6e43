// A postmortem as Markdown, as JSON, as the digest long-term memory keeps, and as its entry.
#include <fmt/format.h>

#include <algorithm>

#include "core/base/json_object.hpp"
#include "core/base/text.hpp"
#include "core/postmortem/postmortem.hpp"
#include "core/postmortem/text.hpp"

namespace sreh::postmortem {

using namespace detail;

std::string to_markdown(const document& d) {
  auto where = d.work_id.empty() ? fmt::format("Run `{}` ({}).", d.run_id, d.outcome)
                                 : fmt::format("Work `{}` ({}).", d.work_id, d.outcome);
  auto step_of = [](const std::string& run, std::int64_t n) {
    return run.empty() ? fmt::format("step {}", n) : fmt::format("run `{}` step {}", run, n);
  };
  std::string md = fmt::format("# Postmortem: {}\n\n{}\n\n## Summary\n\n{}\n\n", d.title, where,
                               d.summary.empty() ? "—" : d.summary);
  md += "## Impact\n\n";
  std::string affected;
  for (const auto& a : d.affected)
    affected += (affected.empty() ? "" : ", ") + a;
  md += fmt::format("- Affected: {}\n- Started: {}\n- Cause found: {}\n- Mitigated: {}\n"
                    "- Ended: {}\n- Duration: {}\n\n",
                    affected.empty() ? "—" : affected, when(d.started_at), when(d.detected_at),
                    when(d.mitigated_at), when(d.ended_at), minutes(d.started_at, d.ended_at));
  md += "## Timeline\n\n";
  for (const auto& e : d.timeline)
    md += e.step > 0 ? fmt::format("- {} — {}: {}\n", when(e.at), step_of(e.run, e.step), e.what)
          : e.run.empty() ? fmt::format("- {} — {}\n", when(e.at), e.what)
                          : fmt::format("- {} — run `{}`: {}\n", when(e.at), e.run, e.what);
  md += "\n## Root cause\n\n";
  if (d.causes.empty())
    md += "Not established.\n";
  for (const auto& c : d.causes) {
    std::string steps;
    for (auto n : c.evidence_steps)
      steps += (steps.empty() ? "" : ", ") + std::to_string(n);
    md += fmt::format("**{} on {}** (confidence {:.2f}; evidence: {}steps {})\n\n", c.kind,
                      c.target, c.confidence, c.run.empty() ? "" : "run `" + c.run + "` ",
                      steps.empty() ? "—" : steps);
    for (const auto& e : c.evidence)
      md += "- " + e + "\n";
    md += "\n";
  }
  md += "## What was done\n\n";
  if (d.actions.empty())
    md += "No action was taken.\n";
  for (const auto& a : d.actions)
    md += fmt::format("- {}: `{} {}` — {}{}{}{}\n", step_of(a.run, a.step), a.tool, a.args, a.state,
                      a.verified ? ", verified" : ", not verified",
                      a.approved_by.empty()
                        ? ", allowed by policy"
                        : ", approved by " + a.approved_by + " at " + when(a.approved_at),
                      a.for_what.empty() ? "" : " (for " + a.for_what + ")");
  md += "\n## What did not work\n\n";
  if (d.did_not_work.empty())
    md += "Nothing on record.\n";
  for (const auto& w : d.did_not_work)
    md += "- " + w + "\n";
  md += "\n## Follow-ups\n\n";
  if (d.follow_ups.empty())
    md += "None derived from the record.\n";
  for (const auto& f : d.follow_ups)
    md += "- [ ] " + f + "\n";
  return md;
}

void write_json(json::writer& w, const document& d) {
  w.StartObject();
  if (d.work_id.empty())
    json::field(w, "run_id", d.run_id);
  else
    json::field(w, "work_id", d.work_id);
  json::fields(w, "title", d.title, "summary", d.summary, "outcome", d.outcome);
  w.Key("impact");
  w.StartObject();
  json::fields(w, "affected", d.affected);
  const std::pair<const char*, timestamp_us> times[] = {{"started_at", d.started_at},
                                                        {"detected_at", d.detected_at},
                                                        {"mitigated_at", d.mitigated_at},
                                                        {"ended_at", d.ended_at}};
  for (auto [key, t] : times) {
    w.Key(key);
    if (t > 0)
      json::timestamp(w, t);
    else
      w.Null();
  }
  json::fields(w, "duration_s",
               d.ended_at > d.started_at ? (d.ended_at - d.started_at) / 1'000'000
                                         : std::int64_t{0});
  w.EndObject();
  w.Key("timeline");
  w.StartArray();
  for (const auto& e : d.timeline) {
    w.StartObject();
    w.Key("at");
    json::timestamp(w, e.at);
    json::fields(w, "step", e.step, "what", e.what);
    if (!d.work_id.empty())
      json::field(w, "run", json::string_or_null(e.run));
    w.EndObject();
  }
  w.EndArray();
  w.Key("root_cause");
  w.StartArray();
  for (const auto& c : d.causes) {
    w.StartObject();
    json::fields(w, "kind", c.kind, "target", c.target, "confidence", c.confidence);
    w.Key("evidence_steps");
    w.StartArray();
    for (auto n : c.evidence_steps)
      w.Int64(n);
    w.EndArray();
    json::fields(w, "evidence", c.evidence);
    if (!d.work_id.empty())
      json::field(w, "run", c.run);
    w.EndObject();
  }
  w.EndArray();
  w.Key("actions");
  w.StartArray();
  for (const auto& a : d.actions) {
    w.StartObject();
    json::fields(w, "step", a.step, "tool", a.tool, "args", json::raw_or(a.args, "{}"), "state",
                 a.state, "verified", a.verified, "check", a.check, "approved_by",
                 json::string_or_null(a.approved_by), "for", a.for_what);
    w.Key("approved_at");
    if (a.approved_at > 0)
      json::timestamp(w, a.approved_at);
    else
      w.Null();
    if (!d.work_id.empty())
      json::field(w, "run", a.run);
    w.EndObject();
  }
  w.EndArray();
  json::fields(w, "did_not_work", d.did_not_work, "follow_ups", d.follow_ups);
  w.EndObject();
}

std::string to_json(const document& d) {
  return json::build([&](json::writer& w) { write_json(w, d); });
}

std::string to_digest(const document& d) {
  std::string out =
    d.title + (d.work_id.empty() ? " (run " + d.run_id + ")." : " (work " + d.work_id + ").");
  if (!d.summary.empty())
    out += "\n" + d.summary;
  for (const auto& c : d.causes) {
    out += fmt::format("\nCause: {} on {}.", c.kind, c.target);
    for (const auto& e : c.evidence)
      out += " " + e.substr(e.find(": ") == std::string::npos ? 0 : e.find(": ") + 2) + ".";
  }
  for (const auto& a : d.actions)
    out += fmt::format("\nDone: {} {} ({}{}{}).", a.tool, a.args, a.state,
                       a.verified ? ", it worked" : ", not verified",
                       a.approved_by.empty() ? "" : ", approved by " + a.approved_by);
  for (const auto& w : d.did_not_work)
    out += "\nDid not work: " + w + ".";
  for (const auto& f : d.follow_ups)
    out += "\nFollow-up: " + f;
  return out;
}

memory::draft as_memory(const document& d) {
  memory::draft m;
  m.kind = memory::kind::postmortem;
  m.text = std::string{utf8_prefix(to_digest(d), memory::max_text_bytes)};
  if (!d.service.empty())
    m.labels["service"] = d.service;
  if (!d.alert.empty())
    m.labels["alert"] = d.alert;
  if (!d.causes.empty() && !d.causes[0].kind.empty())
    m.labels["fault"] = d.causes[0].kind;
  if (d.work_id.empty())
    m.labels["run"] = d.run_id;
  else
    m.labels["work"] = d.work_id;
  for (const auto& a : d.affected)
    if (m.entities.size() < memory::max_entities && a.size() <= memory::max_entity_bytes)
      m.entities.push_back(a);
  std::sort(m.entities.begin(), m.entities.end());
  m.from.run_id = d.run_id;
  m.from.work_id = d.work_id;
  return m;
}

} // namespace sreh::postmortem
