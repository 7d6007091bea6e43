#include "core/notify/render.hpp"

#include <fmt/format.h>

#include <ctime>

#include "core/base/json_object.hpp"
#include "core/base/sha256.hpp"

namespace sreh::notify {

namespace {

void write_notice_fields(json::writer& w, const notice& n) {
  json::fields(w, "what", n.what, "why", n.why, "risk", n.risk, "who", n.who, "link", n.link);
  w.Key("labels");
  w.StartObject();
  for (const auto& [k, v] : n.labels)
    json::field(w, k, v);
  w.EndObject();
}

message webhook(const receiver& r, const notice& n, std::string_view id) {
  message m;
  m.body = json::build([&](json::writer& w) {
    w.StartObject();
    json::fields(w, "version", "1", "delivery", id, "receiver", r.name, "notice",
                 json::raw_text{to_json(n)});
    w.EndObject();
  });
  if (!r.secret.empty())
    m.headers["X-Sreh-Signature"] = "sha256=" + hmac_sha256_hex(r.secret, m.body);
  return m;
}

message slack(const notice& n) {
  message m;
  const auto text = fmt::format("*{}*\n{}\n*Why:* {}\n*Risk:* {}\n*Who may decide:* {}\n<{}|Open>",
                                n.title, n.what, n.why, n.risk, n.who, n.link);
  m.body = json::build([&](json::writer& w) {
    w.StartObject();
    json::field(w, "text", n.title);
    w.Key("blocks");
    w.StartArray();
    w.StartObject();
    json::fields(w, "type", "section");
    w.Key("text");
    json::write_object(w, "type", "mrkdwn", "text", text);
    w.EndObject();
    w.EndArray();
    w.EndObject();
  });
  return m;
}

message pagerduty(const receiver& r, const notice& n) {
  // One PagerDuty incident per Work (resolved with it) and per approval; a retry of the same
  // delivery carries the same dedup_key, so PagerDuty folds it into the incident it made.
  const bool resolve = n.event == "work.resolved";
  const auto dedup = "sreh/" + (n.approval.empty() ? n.subject : n.approval);
  char at[32];
  message m;
  m.body = json::build([&](json::writer& w) {
    w.StartObject();
    json::fields(w, "routing_key", r.routing_key, "event_action", resolve ? "resolve" : "trigger",
                 "dedup_key", dedup, "client", "sreh", "client_url", n.link);
    if (!resolve) {
      w.Key("payload");
      w.StartObject();
      json::fields(w, "summary", n.title.substr(0, 1024), "source", "sreh", "severity",
                   pagerduty_severity(n), "timestamp", std::string{format_rfc3339(n.at, at)},
                   "component", n.subject, "group", n.subject_kind, "class", n.event);
      w.Key("custom_details");
      w.StartObject();
      write_notice_fields(w, n);
      w.EndObject();
      w.EndObject();
      w.Key("links");
      w.StartArray();
      json::write_object(w, "href", n.link, "text", "sreh");
      w.EndArray();
    }
    w.EndObject();
  });
  return m;
}

/// An RFC 5322 date ("Mon, 07 Dec 2026 21:19:59 +0000").
std::string mail_date(timestamp_us now) {
  const std::time_t t = now / 1'000'000;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%a, %d %b %Y %H:%M:%S +0000", &tm);
  return buf;
}

/// A header value on one line: CR and LF (a header injection) become spaces.
std::string one_line(std::string_view s) {
  std::string out{s};
  for (auto& c : out)
    if (c == '\r' || c == '\n')
      c = ' ';
  return out;
}

message email(const receiver& r, const notice& n, std::string_view id, timestamp_us now) {
  message m;
  m.content_type = "text/plain; charset=utf-8";
  std::string to;
  for (const auto& a : r.to)
    to += (to.empty() ? "" : ", ") + a;
  m.body = fmt::format(
    "From: {}\r\nTo: {}\r\nSubject: [sreh] {}\r\nDate: {}\r\nMessage-ID: <{}@sreh>\r\n"
    "X-Sreh-Delivery: {}\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n"
    "Content-Transfer-Encoding: 8bit\r\n\r\n"
    "{}\r\n\r\nWhy: {}\r\nRisk: {}\r\nWho may decide: {}\r\n\r\n{}\r\n",
    one_line(r.from), one_line(to), one_line(n.title), mail_date(now), id, id, n.what, n.why,
    n.risk, n.who, n.link);
  return m;
}

} // namespace

std::string pagerduty_severity(const notice& n) {
  if (n.severity == "critical" || n.severity == "page" || n.severity == "sev1")
    return "critical";
  if (n.event == "work.sla_breached" || n.event == "approval.in_doubt" || n.severity == "error")
    return "error";
  if (n.event.starts_with("approval.") || n.severity == "warning")
    return "warning";
  return "info";
}

message render(const receiver& r, const notice& n, std::string_view delivery_id, timestamp_us now) {
  message m;
  switch (r.kind) {
  case receiver_kind::webhook:
    m = webhook(r, n, delivery_id);
    break;
  case receiver_kind::slack:
    m = slack(n);
    break;
  case receiver_kind::pagerduty:
    m = pagerduty(r, n);
    break;
  case receiver_kind::email:
    return email(r, n, delivery_id, now);
  }
  m.headers["X-Sreh-Delivery"] = std::string{delivery_id};
  m.headers["Idempotency-Key"] = std::string{delivery_id};
  return m;
}

} // namespace sreh::notify
