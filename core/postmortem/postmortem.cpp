#include "core/postmortem/postmortem.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "core/base/json_object.hpp"
#include "core/postmortem/text.hpp"

namespace sreh::postmortem {

namespace {

using namespace detail;

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
  case step_kind::message:
    if (auto a = json::parse(s.args); a && a->IsObject())
      return fmt::format("{} said: {}", json::string_or(*a, "author"),
                         short_text(json::string_or(*a, "text"), 300));
    return "a message was taken";
  case step_kind::reply:
    return "answered: " + short_text(s.result, 300);
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

void add_event(document& d, timestamp_us at, std::int64_t step, std::string what) {
  d.timeline.push_back({at, step, std::move(what), {}});
}

/// The causes (with when the last step of their evidence had its result), the affected entities
/// (the alerted service, the causes' targets) and the service the document is about.
void add_impact(document& d, const std::vector<step>& steps, const rapidjson::Value* result,
                std::map<std::string, std::string>& labels) {
  if (result)
    add_causes(d, *result);
  for (const auto& c : d.causes)
    for (auto n : c.evidence_steps)
      if (const auto* s = step_numbered(steps, n))
        d.detected_at = std::max(d.detected_at, s->finished_at);
  auto add_affected = [&](const std::string& e) {
    if (!e.empty() && std::find(d.affected.begin(), d.affected.end(), e) == d.affected.end())
      d.affected.push_back(e);
  };
  add_affected(labels["service"]);
  for (const auto& c : d.causes)
    add_affected(c.target);
  d.service =
    labels["service"].empty() && !d.affected.empty() ? d.affected.front() : labels["service"];
}

/// Step `s` and its approvals on the timeline; its denials and failure under what did not work.
void add_step_lines(document& d, const step& s, const std::vector<const approval*>& approvals) {
  if (is_recall(s)) {
    add_event(d, s.finished_at, s.n, "recalled from memory: " + recalled_ids(s));
    return;
  }
  add_event(d, s.finished_at > 0 ? s.finished_at : s.started_at, s.n, step_line(s));
  for (const auto* a : approvals) {
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
  if (s.kind == step_kind::tool && s.state == step_state::failed && approvals.empty())
    d.did_not_work.push_back(
      fmt::format("step {}: {} failed: {}", s.n, s.tool, short_text(s.error)));
}

using remedies = std::map<std::int64_t, std::pair<std::string, bool>>;

/// Tool step `s` as an action of the document — a remedy the conclusion lists, a step people
/// approved, or a call of a mutating tool that ran — with who approved it and whether its check
/// held; none for any other step.
void add_action(document& d, const std::vector<step>& steps, const step& s, const remedies& rems,
                const std::vector<const approval*>& approvals,
                const outcome::mutating_fn& mutating) {
  if (s.kind != step_kind::tool)
    return;
  auto rem = rems.find(s.n);
  bool approved_by_people = false;
  for (const auto* a : approvals)
    approved_by_people = approved_by_people || a->state == approval_state::approved;
  const bool ran =
    s.state == step_state::succeeded || (s.state == step_state::failed && s.executed_at > 0);
  const bool acted = ran && mutating && mutating(s.tool);
  if (rem == rems.end() && !approved_by_people && !acted)
    return;
  action a;
  a.step = s.n;
  a.tool = s.tool;
  a.args = s.args;
  a.state = to_string(s.state);
  if (rem != rems.end()) {
    a.for_what = rem->second.first;
    a.verified = rem->second.second;
  }
  for (const auto* ap : approvals)
    if (ap->state == approval_state::approved) {
      a.approved_by = voters(*ap, true);
      a.approved_at = ap->decided_at;
    }
  for (const auto& o : steps) {
    if (o.kind != step_kind::observe || o.n <= s.n)
      continue;
    auto args = json::parse(o.args);
    if (!args || !args->IsObject() || json::int_of(*args, "for_step").value_or(0) != s.n)
      continue;
    a.check = step_line(o);
    auto held = json::parse(o.result);
    a.verified = held && held->IsObject() && json::bool_or(*held, "holds");
    if (a.verified && d.mitigated_at == 0)
      d.mitigated_at = o.finished_at;
    if (!a.verified)
      d.did_not_work.push_back(
        fmt::format("step {}: {} did not have the effect it should ({})", s.n, s.tool, a.check));
  }
  if (a.verified && d.mitigated_at == 0)
    d.mitigated_at = s.finished_at;
  d.actions.push_back(std::move(a));
}

} // namespace

document of_run(const run& r, const std::vector<step>& steps,
                const std::vector<approval>& approvals, const outcome::mutating_fn& mutating) {
  document d;
  d.run_id = r.id;
  d.outcome = to_string(r.state);
  auto labels = labels_of(r);
  d.alert = labels.contains("alertname") ? labels["alertname"] : labels["alert"];
  d.started_at = r.created_at;
  d.ended_at = r.updated_at;
  auto res = result_of(steps);
  const rapidjson::Value* result = res ? &*res : nullptr;
  add_impact(d, steps, result, labels);

  std::map<std::int64_t, std::vector<const approval*>> by_step;
  for (const auto& a : approvals)
    by_step[a.step_n].push_back(&a);
  const auto rems = remedies_of(result);
  add_event(d, r.created_at, 0,
            fmt::format("run started: \"{}\"{}", short_text(r.goal, 300),
                        r.submitter.empty() ? "" : " (by " + r.submitter + ")"));
  for (const auto& s : steps) {
    const auto& asked = by_step[s.n];
    add_step_lines(d, s, asked);
    if (!is_recall(s))
      add_action(d, steps, s, rems, asked, mutating);
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

} // namespace sreh::postmortem
