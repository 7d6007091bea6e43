#pragma once
// A notification as people read it: what happened, why, the risk and who may decide, with a
// link; made from one event of the log and what the notifier looked up about its run, Work or
// approval (docs/notifications.md). Pure: no I/O.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/clock.hpp"
#include "core/base/expected.hpp"
#include "core/model/event.hpp"

namespace sreh::notify {

/// The events that notify, by the names routes match on (`match: {event: …}`).
inline constexpr std::string_view notice_events[] = {
  "approval.requested", "approval.escalated", "approval.expired",
  "approval.in_doubt",  "work.opened",        "work.sla_breached",
  "work.resolved",      "work.reopened",      "run.failed"};

/// The notice event an event of the log is (`approval.requested` of kind in_doubt →
/// `approval.in_doubt`, `work.created` → `work.opened`, a Work's transition to resolved →
/// `work.resolved`, its reopen → `work.reopened`); nullopt for an event that notifies nobody.
[[nodiscard]] std::optional<std::string_view> notice_event(const event& e);

/// What the notifier looked up about the event's run or Work, and its approval.
struct subject_facts {
  std::string kind;  // run | work
  std::string title; // the run's goal, the Work's title
  std::string severity;
  std::map<std::string, std::string> labels;
  // approval events
  std::string tool, args = "{}", rule, reason, risk;
  std::vector<std::string> roles; // who may decide (any of)
  std::int64_t required = 1;
  std::string requester; // may never decide
  timestamp_us expires_at = 0;
};

struct notice {
  std::string event; // one of notice_events
  std::string event_id;
  std::int64_t seq = 0;
  timestamp_us at = 0;
  std::string subject_kind; // run | work
  std::string subject;      // the run or Work id
  std::string approval;     // the approval id ("" for none)
  std::string title;        // one line
  std::string what, why, risk, who;
  std::vector<std::string> roles;
  std::string severity;
  std::map<std::string, std::string> labels;
  std::string link; // the console/API page of the subject
};

/// The notice of `e` (whose notice event is `kind`), read from its data and `s`; `link_base`
/// is where users reach the node (http://host:port). `invalid_argument` for event data that is
/// not a JSON object.
[[nodiscard]] expected<notice> make_notice(const event& e, std::string_view kind,
                                           const subject_facts& s, std::string_view link_base);

/// The value a route's key reads (`event`, `severity`, `kind`, a label; "" when absent). `role`
/// has several values: see `roles`.
[[nodiscard]] std::string match_value(const notice& n, std::string_view key);

/// The notice as JSON (the webhook receiver's body, the outbox's stored form) and back.
[[nodiscard]] std::string to_json(const notice& n);
[[nodiscard]] expected<notice> notice_from_json(std::string_view text);

} // namespace sreh::notify
