#include "core/postmortem/postmortem.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "core/base/json_object.hpp"
#include "core/base/text.hpp"

namespace sreh::postmortem {

namespace {

/// A JSON member of `v` as an object or array, or null.
const rapidjson::Value* object_at(const rapidjson::Value& v, const char* key) {
  const auto* m = json::member(v, key);
  return m != nullptr && m->IsObject() ? m : nullptr;
}

const rapidjson::Value* array_at(const rapidjson::Value& v, const char* key) {
  const auto* m = json::member(v, key);
  return m != nullptr && m->IsArray() ? m : nullptr;
}

std::string short_text(std::string_view s, std::size_t max = 160) {
  std::string out{utf8_prefix(s, max)};
  for (auto& c : out)
    if (c == '\n' || c == '\r' || c == '\t')
      c = ' ';
  return out.size() < s.size() ? out + "…" : out;
}

std::string when(timestamp_us t) {
  if (t <= 0)
    return "—";
  char buf[32];
  return std::string{format_rfc3339(t, buf)};
}

std::string minutes(timestamp_us from, timestamp_us to) {
  if (from <= 0 || to < from)
    return "—";
  auto s = (to - from) / 1'000'000;
  if (s < 60)
    return fmt::format("{} s", s);
  if (s < 3600)
    return fmt::format("{} min {} s", s / 60, s % 60);
  return fmt::format("{} h {} min", s / 3600, (s % 3600) / 60);
}

/// The run's labels as a map (non-string values left out).
std::map<std::string, std::string> labels_of(const run& r) {
  std::map<std::string, std::string> out;
  if (auto doc = json::parse(r.labels); doc && doc->IsObject())
    for (const auto& m : doc->GetObject())
      if (m.value.IsString())
        out.emplace(m.name.GetString(), m.value.GetString());
  return out;
}

/// What one step did, in a line.
std::string step_line(const step& s) {
  std::string what;
  switch (s.kind) {
  case step_kind::tool:
    what = fmt::format("{} {}", s.tool, s.args);
    break;
  case step_kind::reason:
    what = "asked the model";
    break;
  case step_kind::approval:
    what = "waited for a decision";
    break;
  case step_kind::timer:
    what = "waited to check an earlier step";
    break;
  case step_kind::observe:
    what = "checked an earlier step's effect";
    if (auto a = json::parse(s.args); a && a->IsObject())
      what = fmt::format("checked step {}: {}", json::int_of(*a, "for_step").value_or(0),
                         json::string_or(*a, "check"));
    if (auto r = json::parse(s.result); r && r->IsObject())
      what += json::bool_or(*r, "holds") ? " — holds" : " — does not hold";
    return what;
  case step_kind::conclude:
    what = "concluded";
    if (auto r = json::parse(s.result); r && r->IsObject())
      what += ": " + short_text(json::string_or(*r, "conclusion"), 300);
    return what;
  case step_kind::subruns:
    what = "started runs of its own";
    break;
  }
  switch (s.state) {
  case step_state::succeeded:
    return what;
  case step_state::failed:
    return what + " — failed: " + short_text(s.error);
  case step_state::in_doubt:
    return what + " — in doubt: " + short_text(s.error);
  case step_state::cancelled:
    return what + " — cancelled";
  case step_state::intent:
    return what + " — never finished";
  }
  return what;
}

/// The recall step's memories, "mem_a, mem_b".
std::string recalled_ids(const step& s) {
  std::string out;
  if (auto r = json::parse(s.result); r && r->IsObject())
    if (const auto* list = array_at(*r, "memories"))
      for (const auto& m : list->GetArray())
        if (m.IsObject())
          out += (out.empty() ? "" : ", ") + json::string_or(m, "id");
  return out;
}

std::string voters(const approval& a, bool approving) {
  std::string out;
  for (const auto& v : a.votes)
    if (v.approve == approving)
      out += (out.empty() ? "" : ", ") + v.by;
  return out;
}

/// The conclusion's structured result, when the reasoner wrote one.
std::optional<rapidjson::Document> result_of(const std::vector<step>& steps) {
  for (auto i = steps.rbegin(); i != steps.rend(); ++i) {
    if (i->kind != step_kind::conclude)
      continue;
    auto d = json::parse(i->decision);
    if (!d || !d->IsObject())
      return std::nullopt;
    const auto* detail = object_at(*d, "detail");
    const auto* res = detail ? object_at(*detail, "result") : nullptr;
    if (res == nullptr)
      return std::nullopt;
    rapidjson::Document out;
    out.CopyFrom(*res, out.GetAllocator());
    return out;
  }
  return std::nullopt;
}

const step* step_numbered(const std::vector<step>& steps, std::int64_t n) {
  return n >= 1 && n <= static_cast<std::int64_t>(steps.size())
           ? &steps[static_cast<std::size_t>(n - 1)]
           : nullptr;
}

void add_causes(document& d, const rapidjson::Value& res) {
  const auto* diagnoses = array_at(res, "diagnoses");
  if (diagnoses == nullptr)
    return;
  for (const auto& g : diagnoses->GetArray()) {
    if (!g.IsObject())
      continue;
    cause c;
    c.kind = json::string_or(g, "kind");
    c.target = json::string_or(g, "target");
    if (const auto* conf = json::member(g, "confidence"); conf && conf->IsNumber())
      c.confidence = conf->GetDouble();
    std::set<std::int64_t> seen;
    if (const auto* ev = array_at(g, "evidence"))
      for (const auto& f : ev->GetArray()) {
        auto n = f.IsObject() ? json::int_of(f, "step").value_or(0) : 0;
        if (n <= 0)
          continue; // a prior (the goal's words, a memory), not a step's evidence
        seen.insert(n);
        c.evidence.push_back(fmt::format("step {}: {}", n, json::string_or(f, "fact")));
      }
    c.evidence_steps.assign(seen.begin(), seen.end());
    d.causes.push_back(std::move(c));
  }
}

void add_did_not_work(document& d, const rapidjson::Value& res) {
  if (const auto* ruled = array_at(res, "ruled_out"))
    for (const auto& r : ruled->GetArray())
      if (r.IsObject()) {
        auto kind = json::string_or(r, "kind");
        d.did_not_work.push_back(
          fmt::format("ruled out {}{}: {}", kind.empty() ? "" : kind + " on ",
                      json::string_or(r, "target"), json::string_or(r, "reason")));
      }
  if (const auto* mems = array_at(res, "memories"))
    for (const auto& m : mems->GetArray()) {
      const auto* borne = m.IsObject() ? json::member(m, "borne_out") : nullptr;
      if (borne && borne->IsBool() && !borne->GetBool())
        d.did_not_work.push_back(
          fmt::format("memory {} pointed at {}, which the evidence did not bear out",
                      json::string_or(m, "id"), json::string_or(m, "fault")));
    }
}

/// Each remedy the conclusion lists, keyed by its step: what it was for and whether it held.
std::map<std::int64_t, std::pair<std::string, bool>> remedies_of(const rapidjson::Value* res) {
  std::map<std::int64_t, std::pair<std::string, bool>> out;
  const auto* list = res ? array_at(*res, "remediation") : nullptr;
  if (list != nullptr)
    for (const auto& r : list->GetArray())
      if (r.IsObject())
        out[json::int_of(r, "step").value_or(0)] = {json::string_or(r, "for"),
                                                    json::bool_or(r, "verified")};
  return out;
}

void add_follow_ups(document& d) {
  for (const auto& a : d.actions) {
    if (a.state == "succeeded" && (a.tool == "deploy.rollback" || a.tool.ends_with(".rollback")))
      d.follow_ups.push_back(fmt::format(
        "The rollback ({} {}) was decided and run step by step: make it a flow, so that the "
        "next one is one approved step.",
        a.tool, a.args));
    if (a.state == "succeeded" && !a.verified)
      d.follow_ups.push_back(
        fmt::format("Step {} ({}) was never verified to have worked: add a post-condition "
                    "to {}.",
                    a.step, a.tool, a.tool));
  }
  for (const auto& w : d.did_not_work)
    if (w.starts_with("denied: "))
      d.follow_ups.push_back("Review the denied action and the policy rule that asked for it: " +
                             w.substr(8));
    else if (w.starts_with("memory "))
      d.follow_ups.push_back("Review the misleading memory: " + w + ".");
  if (d.detected_at > 0 && d.detected_at - d.started_at > 10LL * 60 * 1'000'000)
    d.follow_ups.push_back(fmt::format("Finding the cause took {}: an alert on the cause "
                                       "itself would have pointed there first.",
                                       minutes(d.started_at, d.detected_at)));
  if (d.causes.empty() && d.outcome != "succeeded")
    d.follow_ups.push_back("The cause was not found: go on by hand from the timeline.");
}

/// One line of a Work's own timeline; "" for the events its runs' timelines tell.
std::string work_event_line(const sreh::event& e) {
  auto doc = json::parse(e.data);
  if (!doc || !doc->IsObject())
    return {};
  const auto& v = *doc;
  auto by = json::string_or(v, "by");
  auto text = json::string_or(v, "text");
  auto by_text = [&] {
    return (by.empty() ? std::string{} : " (by " + by + ")") +
           (text.empty() ? std::string{} : ": " + short_text(text, 300));
  };
  if (e.kind == "work.created")
    return fmt::format("Work opened from template {}: \"{}\"{}", json::string_or(v, "template"),
                       short_text(json::string_or(v, "title"), 200),
                       by.empty() ? "" : " (by " + by + ")");
  if (e.kind == "work.transition")
    return fmt::format("{} → {}{}", json::string_or(v, "from"), json::string_or(v, "to"),
                       by_text());
  if (e.kind == "work.comment")
    return fmt::format("comment{}", by_text());
  if (e.kind == "work.triggered")
    return fmt::format("triggered again ({}){}", json::string_or(v, "action"), by_text());
  if (e.kind == "work.alerts")
    return fmt::format(
      "alerts: {} firing, {} resolved, {} still firing{}", json::int_of(v, "firing").value_or(0),
      json::int_of(v, "resolved").value_or(0), json::int_of(v, "still_firing").value_or(0),
      by.empty() ? "" : " (from " + by + ")");
  if (e.kind == "work.run_refused")
    return "a run could not start: " + short_text(json::string_or(v, "error"), 300);
  if (e.kind == "work.criteria") {
    auto err = json::string_or(v, "error");
    return err.empty() ? std::string{}
                       : "the done-criteria could not be evaluated: " + short_text(err);
  }
  if (e.kind == "work.sla_breached")
    return fmt::format("the {} SLA was breached", json::string_or(v, "clock"));
  return {}; // work.run_started, work.run_ended: the runs' own lines say it
}

/// A line of the timeline of a run's own postmortem.
void add_event(document& d, timestamp_us at, std::int64_t step, std::string what) {
  d.timeline.push_back({at, step, std::move(what), {}});
}

/// `x` into `into` unless it is there already.
void add_once(std::vector<std::string>& into, const std::string& x) {
  if (!x.empty() && std::find(into.begin(), into.end(), x) == into.end())
    into.push_back(x);
}

} // namespace

document of_run(const run& r, const std::vector<step>& steps,
                const std::vector<approval>& approvals) {
  document d;
  d.run_id = r.id;
  d.outcome = to_string(r.state);
  auto labels = labels_of(r);
  d.alert = labels.contains("alertname") ? labels["alertname"] : labels["alert"];
  d.started_at = r.created_at;
  d.ended_at = r.updated_at;
  auto res = result_of(steps);
  const rapidjson::Value* result = res ? &*res : nullptr;
  if (result)
    add_causes(d, *result);
  // Detected: when the last step of the causes' evidence had its result.
  for (const auto& c : d.causes)
    for (auto n : c.evidence_steps)
      if (const auto* s = step_numbered(steps, n))
        d.detected_at = std::max(d.detected_at, s->finished_at);
  // Affected: the alerted service, the causes' targets, what stayed unexplained.
  std::vector<std::string> affected;
  auto add_affected = [&](const std::string& e) {
    if (!e.empty() && std::find(affected.begin(), affected.end(), e) == affected.end())
      affected.push_back(e);
  };
  add_affected(labels["service"]);
  for (const auto& c : d.causes)
    add_affected(c.target);
  d.affected = affected;
  d.service = labels["service"].empty() && !affected.empty() ? affected.front() : labels["service"];

  std::map<std::int64_t, std::vector<const approval*>> by_step;
  for (const auto& a : approvals)
    by_step[a.step_n].push_back(&a);
  auto remedies = remedies_of(result);
  add_event(d, r.created_at, 0,
            fmt::format("run started: \"{}\"{}", short_text(r.goal, 300),
                        r.submitter.empty() ? "" : " (by " + r.submitter + ")"));
  for (const auto& s : steps) {
    if (is_recall(s)) {
      add_event(d, s.finished_at, s.n, "recalled from memory: " + recalled_ids(s));
      continue;
    }
    add_event(d, s.finished_at > 0 ? s.finished_at : s.started_at, s.n, step_line(s));
    for (const auto* a : by_step[s.n]) {
      add_event(d, a->created_at, s.n,
                fmt::format("approval {} asked{}", a->id,
                            a->reason.empty() ? "" : ": " + short_text(a->reason)));
      for (const auto& v : a->votes)
        add_event(d, v.at, s.n,
                  fmt::format("{} by {} ({}){}", v.approve ? "approved" : "denied", v.by, v.role,
                              v.comment.empty() ? "" : ": " + short_text(v.comment)));
      if (a->state == approval_state::expired)
        add_event(d, a->decided_at, s.n, "approval " + a->id + " expired");
      if (a->state == approval_state::denied || a->state == approval_state::expired)
        d.did_not_work.push_back(fmt::format(
          "denied: step {} {} {} ({})", s.n, s.tool, s.args,
          a->state == approval_state::expired ? "no decision in time" : "by " + voters(*a, false)));
    }
    if (s.kind == step_kind::tool && s.state == step_state::failed && by_step[s.n].empty())
      d.did_not_work.push_back(
        fmt::format("step {}: {} failed: {}", s.n, s.tool, short_text(s.error)));
    auto rem = remedies.find(s.n);
    bool approved_by_people = false;
    for (const auto* a : by_step[s.n])
      approved_by_people = approved_by_people || a->state == approval_state::approved;
    if (s.kind != step_kind::tool || (rem == remedies.end() && !approved_by_people))
      continue;
    action a;
    a.step = s.n;
    a.tool = s.tool;
    a.args = s.args;
    a.state = to_string(s.state);
    if (rem != remedies.end()) {
      a.for_what = rem->second.first;
      a.verified = rem->second.second;
    }
    for (const auto* ap : by_step[s.n])
      if (ap->state == approval_state::approved) {
        a.approved_by = voters(*ap, true);
        a.approved_at = ap->decided_at;
      }
    for (const auto& o : steps)
      if (o.kind == step_kind::observe && o.n > s.n) {
        auto args = json::parse(o.args);
        if (args && args->IsObject() && json::int_of(*args, "for_step").value_or(0) == s.n) {
          a.check = step_line(o);
          auto held = json::parse(o.result);
          a.verified = held && held->IsObject() && json::bool_or(*held, "holds");
          if (a.verified && d.mitigated_at == 0)
            d.mitigated_at = o.finished_at;
          if (!a.verified)
            d.did_not_work.push_back(fmt::format("step {}: {} did not have the effect it "
                                                 "should ({})",
                                                 s.n, s.tool, a.check));
        }
      }
    if (a.verified && d.mitigated_at == 0)
      d.mitigated_at = s.finished_at;
    d.actions.push_back(std::move(a));
  }
  add_event(d, r.updated_at, 0,
            fmt::format("run {}{}", to_string(r.state),
                        r.state == run_state::succeeded ? ""
                        : r.error.empty()               ? ""
                                                        : ": " + short_text(r.error, 300)));
  std::stable_sort(d.timeline.begin(), d.timeline.end(),
                   [](const event& a, const event& b) { return a.at < b.at; });
  if (result)
    add_did_not_work(d, *result);
  auto summary = result ? json::string_or(*result, "summary") : std::string{};
  d.summary = !summary.empty() ? summary : !r.conclusion.empty() ? r.conclusion : r.error;
  d.title = d.causes.empty()
              ? fmt::format("{}: {}", d.service.empty() ? r.id : d.service, short_text(r.goal, 80))
              : fmt::format("{}: {} on {}", d.service.empty() ? d.causes[0].target : d.service,
                            d.causes[0].kind, d.causes[0].target);
  add_follow_ups(d);
  return d;
}

document of_work(const works::work& w, const std::vector<sreh::event>& timeline,
                 const std::vector<run_record>& runs) {
  document d;
  d.work_id = w.id;
  d.outcome = works::to_string(w.state);
  std::map<std::string, std::string> labels;
  if (auto doc = json::parse(w.labels); doc && doc->IsObject())
    for (const auto& m : doc->GetObject())
      if (m.value.IsString())
        labels.emplace(m.name.GetString(), m.value.GetString());
  d.alert = labels.contains("alertname") ? labels["alertname"] : labels["alert"];
  d.started_at = w.created_at;
  d.mitigated_at = w.marks.mitigated_at;
  d.ended_at = w.marks.resolved_at > 0 ? w.marks.resolved_at : w.updated_at;
  int reopened = 0;
  for (const auto& e : timeline) {
    auto line = work_event_line(e);
    if (!line.empty())
      d.timeline.push_back({e.at, 0, line, {}});
    if (e.kind == "work.sla_breached")
      if (auto v = json::parse(e.data); v && v->IsObject())
        add_once(d.follow_ups,
                 fmt::format("The {} SLA was breached: see what held it up in the timeline, "
                             "and whether the template's deadline or the paging needs changing.",
                             json::string_or(*v, "clock")));
    if (e.kind == "work.transition")
      if (auto v = json::parse(e.data);
          v && v->IsObject() && json::string_or(*v, "input") == "reopen")
        ++reopened;
  }
  if (reopened > 0)
    d.follow_ups.push_back(fmt::format("The Work was reopened {} time{}: the first resolution did "
                                       "not hold; check its done-criteria.",
                                       reopened, reopened == 1 ? "" : "s"));
  add_once(d.affected, labels["service"]);
  std::string summary;
  for (const auto& rec : runs) {
    auto rd = of_run(rec.r, rec.steps, rec.approvals);
    const auto& id = rec.r.id;
    for (auto& e : rd.timeline) {
      e.run = id;
      d.timeline.push_back(std::move(e));
    }
    for (auto& c : rd.causes) {
      bool known = std::any_of(d.causes.begin(), d.causes.end(), [&](const cause& k) {
        return k.kind == c.kind && k.target == c.target;
      });
      c.run = id;
      if (!known)
        d.causes.push_back(std::move(c));
    }
    for (auto& a : rd.actions) {
      a.run = id;
      d.actions.push_back(std::move(a));
    }
    for (const auto& x : rd.did_not_work)
      add_once(d.did_not_work, "run " + id + ": " + x);
    for (const auto& f : rd.follow_ups)
      add_once(d.follow_ups, f);
    for (const auto& a : rd.affected)
      add_once(d.affected, a);
    if (rd.detected_at > 0 && (d.detected_at == 0 || rd.detected_at < d.detected_at))
      d.detected_at = rd.detected_at;
    if (d.mitigated_at == 0 && rd.mitigated_at > 0)
      d.mitigated_at = rd.mitigated_at;
    if (!rd.causes.empty() || summary.empty())
      summary = rd.summary;
  }
  std::stable_sort(d.timeline.begin(), d.timeline.end(),
                   [](const event& a, const event& b) { return a.at < b.at; });
  d.service = !labels["service"].empty() ? labels["service"]
              : !d.affected.empty()      ? d.affected.front()
                                         : std::string{};
  d.summary = summary.empty() ? w.title : summary;
  d.title = d.causes.empty()
              ? w.title
              : fmt::format("{}: {} on {}", w.title, d.causes[0].kind, d.causes[0].target);
  if (runs.empty())
    d.follow_ups.push_back(
      "No run worked on it: it was handled by hand; write down what was done.");
  return d;
}

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
