#include "core/notify/notice.hpp"

#include <fmt/format.h>

#include "core/base/json.hpp"
#include "core/base/json_object.hpp"

namespace sreh::notify {

namespace {

using labels_t = std::map<std::string, std::string>;

std::string transition_target(const rapidjson::Value& data) {
  return json::string_or(data, "to", "");
}

std::string list_of(const std::vector<std::string>& v, std::string_view none) {
  if (v.empty())
    return std::string{none};
  std::string out;
  for (const auto& s : v)
    out += (out.empty() ? "" : ", ") + s;
  return out;
}

std::string deadline(timestamp_us at) {
  if (at == 0)
    return "no deadline";
  char buf[32];
  return fmt::format("decide by {}", format_rfc3339(at, buf));
}

/// Who may decide an approval: the roles, how many, and who may not.
std::string deciders(const subject_facts& s) {
  auto who =
    fmt::format("{} of role {}",
                s.required == 1 ? std::string{"one person"} : fmt::format("{} people", s.required),
                list_of(s.roles, "approver or admin"));
  if (!s.requester.empty())
    who += fmt::format(" (not {}, who asked)", s.requester);
  return who + "; " + deadline(s.expires_at);
}

void approval_text(notice& n, const rapidjson::Value& d, const subject_facts& s) {
  n.approval = json::string_or(d, "approval", "");
  const auto tool = s.tool.empty() ? json::string_or(d, "tool", "") : s.tool;
  n.risk = s.risk.empty() ? "unknown" : s.risk;
  n.roles = s.roles;
  n.who = deciders(s);
  if (n.event == "approval.in_doubt") {
    n.title = fmt::format("In doubt: did {} take effect? ({})", tool, n.subject);
    n.what =
      fmt::format("Run {} crashed while {} was running; its outcome is unknown.", n.subject, tool);
    n.why = "The tool cannot tell whether the action happened: a person must say so before the "
            "run goes on.";
    return;
  }
  const auto reason = s.reason.empty() ? json::string_or(d, "reason", "") : s.reason;
  const auto rule = s.rule.empty() ? json::string_or(d, "rule", "") : s.rule;
  if (n.event == "approval.requested")
    n.title = fmt::format("Approval needed: {} ({})", tool, n.subject);
  else if (n.event == "approval.escalated")
    n.title = fmt::format("Approval escalated: {} ({})", tool, n.subject);
  else
    n.title = fmt::format("Approval expired: {} ({})", tool, n.subject);
  n.what = fmt::format("Run \"{}\" wants to run {} with {}.", s.title, tool, s.args);
  n.why = reason.empty() ? fmt::format("policy rule {}", rule)
                         : fmt::format("{} (policy rule {})", reason, rule);
  if (n.event == "approval.expired")
    n.who = "nobody decided in time; the action was not run";
}

void work_text(notice& n, const rapidjson::Value& d, const subject_facts& s) {
  n.risk = s.severity.empty() ? "unknown" : s.severity;
  n.who = "operators of the Work";
  if (n.event == "work.opened") {
    n.title = fmt::format("Work opened: {} ({})", s.title, n.subject);
    n.what = fmt::format("Work {} was opened from template {}.", n.subject,
                         json::string_or(d, "template", "?"));
    n.why = fmt::format("opened by {}", json::string_or(d, "by", "?"));
  } else if (n.event == "work.sla_breached") {
    n.title = fmt::format("SLA breached: {} ({})", s.title, n.subject);
    n.what =
      fmt::format("The {} clock of Work {} ran out.", json::string_or(d, "clock", "?"), n.subject);
    auto overdue = json::int_of(d, "overdue_us").value_or(0) / 1'000'000;
    n.why = fmt::format("overdue by {} s", overdue);
  } else {
    const bool resolved = n.event == "work.resolved";
    n.title =
      fmt::format("Work {}: {} ({})", resolved ? "resolved" : "reopened", s.title, n.subject);
    n.what = fmt::format("Work {} moved from {} to {}.", n.subject, json::string_or(d, "from", "?"),
                         transition_target(d));
    auto text = json::string_or(d, "text", "");
    n.why = fmt::format("by {}{}", json::string_or(d, "by", "?"), text.empty() ? "" : ": " + text);
  }
}

void run_text(notice& n, const rapidjson::Value& d, const subject_facts& s) {
  n.title = fmt::format("Run failed: {} ({})", s.title, n.subject);
  n.what =
    fmt::format("Run {} failed after {} steps.", n.subject, json::int_of(d, "steps").value_or(0));
  n.why = json::string_or(d, "message", "");
  n.risk = "none: the run stopped";
  n.who = "operators";
}

void write_labels(json::writer& w, const labels_t& labels) {
  w.StartObject();
  for (const auto& [k, v] : labels)
    json::field(w, k, v);
  w.EndObject();
}

} // namespace

std::optional<std::string_view> notice_event(const event& e) {
  if (e.kind == "approval.escalated" || e.kind == "approval.expired" || e.kind == "run.failed" ||
      e.kind == "work.sla_breached")
    return std::string_view{e.kind};
  if (e.kind == "work.created")
    return "work.opened";
  if (e.kind != "approval.requested" && e.kind != "work.transition")
    return std::nullopt;
  auto d = json::parse_object(e.data);
  if (!d)
    return std::nullopt;
  if (e.kind == "approval.requested")
    return json::string_or(*d, "kind", "action") == "in_doubt" ? "approval.in_doubt"
                                                               : "approval.requested";
  if (transition_target(*d) == "resolved")
    return "work.resolved";
  if (json::string_or(*d, "input", "") == "reopen")
    return "work.reopened";
  return std::nullopt;
}

expected<notice> make_notice(const event& e, std::string_view kind, const subject_facts& s,
                             std::string_view link_base) {
  auto d = json::parse_object(e.data);
  if (!d)
    return sreh::error{errc::invalid_argument,
                       fmt::format("event {}: data: {}", e.id, d.error().message)};
  notice n;
  n.event = std::string{kind};
  n.event_id = e.id;
  n.seq = e.seq;
  n.at = e.at;
  n.subject = e.run_id;
  n.subject_kind = s.kind.empty() ? (kind.starts_with("work.") ? "work" : "run") : s.kind;
  n.severity = s.severity;
  n.labels = s.labels;
  if (kind.starts_with("approval."))
    approval_text(n, *d, s);
  else if (kind.starts_with("work."))
    work_text(n, *d, s);
  else
    run_text(n, *d, s);
  n.link = fmt::format("{}/{}/{}", link_base, n.subject_kind == "work" ? "v1/works" : "v1/runs",
                       n.subject);
  return n;
}

std::string match_value(const notice& n, std::string_view key) {
  if (key == "event")
    return n.event;
  if (key == "severity")
    return n.severity;
  if (key == "kind")
    return n.subject_kind;
  if (key == "subject")
    return n.subject;
  if (auto i = n.labels.find(std::string{key}); i != n.labels.end())
    return i->second;
  return {};
}

std::string to_json(const notice& n) {
  return json::build([&](json::writer& w) {
    w.StartObject();
    json::fields(w, "event", n.event, "event_id", n.event_id, "seq", n.seq, "at", n.at,
                 "subject_kind", n.subject_kind, "subject", n.subject, "approval",
                 json::string_or_null(n.approval), "title", n.title, "what", n.what, "why", n.why,
                 "risk", n.risk, "who", n.who, "roles", n.roles, "severity",
                 json::string_or_null(n.severity), "link", n.link);
    w.Key("labels");
    write_labels(w, n.labels);
    w.EndObject();
  });
}

expected<notice> notice_from_json(std::string_view text) {
  auto d = json::parse_object(text);
  if (!d)
    return d.error();
  notice n;
  n.event = json::string_or(*d, "event", "");
  n.event_id = json::string_or(*d, "event_id", "");
  n.seq = json::int_of(*d, "seq").value_or(0);
  n.at = json::int_of(*d, "at").value_or(0);
  n.subject_kind = json::string_or(*d, "subject_kind", "");
  n.subject = json::string_or(*d, "subject", "");
  n.approval = json::string_or(*d, "approval", "");
  n.title = json::string_or(*d, "title", "");
  n.what = json::string_or(*d, "what", "");
  n.why = json::string_or(*d, "why", "");
  n.risk = json::string_or(*d, "risk", "");
  n.who = json::string_or(*d, "who", "");
  n.severity = json::string_or(*d, "severity", "");
  n.link = json::string_or(*d, "link", "");
  if (const auto* roles = json::member(*d, "roles"); roles != nullptr && roles->IsArray())
    for (const auto& r : roles->GetArray())
      n.roles.push_back(json::string_of(&r));
  if (const auto* labels = json::member(*d, "labels"); labels != nullptr && labels->IsObject())
    for (const auto& m : labels->GetObject())
      n.labels.emplace(m.name.GetString(), json::string_of(&m.value));
  if (n.event.empty() || n.subject.empty())
    return sreh::error{errc::invalid_argument, "notice: event and subject are required"};
  return n;
}

} // namespace sreh::notify
