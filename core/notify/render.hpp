#pragma once
// A notice as each kind of receiver takes it (docs/notifications.md): the webhook's JSON signed
// with HMAC-SHA256, Slack's incoming-webhook JSON, a PagerDuty Events API v2 event, an email
// (RFC 5322). Every form carries the delivery id, so a receiver can drop a repeat: the
// notifier sends a delivery again only when it cannot know that the last attempt arrived.

#include <map>
#include <string>
#include <string_view>

#include "core/notify/notice.hpp"
#include "core/notify/settings.hpp"

namespace sreh::notify {

struct message {
  std::string content_type = "application/json";
  std::string body; // HTTP body, or the whole email (headers and body, CRLF line ends)
  std::map<std::string, std::string> headers;
};

/// The message of delivery `delivery_id` of `n` to `r`. `now` dates an email.
[[nodiscard]] message render(const receiver& r, const notice& n, std::string_view delivery_id,
                             timestamp_us now);

/// PagerDuty's severity for a notice: critical, error, warning or info.
[[nodiscard]] std::string pagerduty_severity(const notice& n);

} // namespace sreh::notify
