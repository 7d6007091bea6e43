// A closed Work's postmortem (docs/postmortems.md, "A Work's postmortem"): its runs' postmortems
// merged with the Work's own timeline.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "core/postmortem/postmortem.hpp"
#include "core/postmortem/text.hpp"

namespace sreh::postmortem {

namespace {

using namespace detail;

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

void add_once(std::vector<std::string>& into, const std::string& x) {
  if (!x.empty() && std::find(into.begin(), into.end(), x) == into.end())
    into.push_back(x);
}

/// The Work's own events on the timeline, and the follow-ups they call for: an SLA breached, a
/// Work reopened.
void add_work_lines(document& d, const std::vector<sreh::event>& timeline) {
  int reopened = 0;
  for (const auto& e : timeline) {
    auto line = work_event_line(e);
    if (!line.empty())
      d.timeline.push_back({e.at, 0, line, {}});
    if (e.kind != "work.sla_breached" && e.kind != "work.transition")
      continue;
    auto v = json::parse(e.data);
    if (!v || !v->IsObject())
      continue;
    if (e.kind == "work.sla_breached")
      add_once(d.follow_ups,
               fmt::format("The {} SLA was breached: see what held it up in the timeline, and "
                           "whether the template's deadline or the paging needs changing.",
                           json::string_or(*v, "clock")));
    else if (json::string_or(*v, "input") == "reopen")
      ++reopened;
  }
  if (reopened > 0)
    d.follow_ups.push_back(fmt::format("The Work was reopened {} time{}: the first resolution did "
                                       "not hold; check its done-criteria.",
                                       reopened, reopened == 1 ? "" : "s"));
}

} // namespace

document of_work(const works::work& w, const std::vector<sreh::event>& timeline,
                 const std::vector<run_record>& runs, const outcome::mutating_fn& mutating) {
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
  add_work_lines(d, timeline);
  add_once(d.affected, labels["service"]);
  std::string summary;
  for (const auto& rec : runs) {
    auto rd = of_run(rec.r, rec.steps, rec.approvals, mutating);
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

} // namespace sreh::postmortem
