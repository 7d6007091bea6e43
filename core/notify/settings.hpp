#pragma once
// The `notify:` section of the node config (docs/notifications.md): where notifications go
// (receivers) and which go where (the routing tree, as Alertmanager's). Read by config/notify,
// used by actors/notify. Secrets (`secret`, `routing_key`, `password`) come from `${ENV}` and
// are never logged or shown.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace sreh::notify {

enum class receiver_kind { webhook, slack, pagerduty, email };

[[nodiscard]] const char* to_string(receiver_kind k);

/// One place notifications are delivered to. Which fields apply depends on `kind`.
struct receiver {
  std::string name;
  receiver_kind kind = receiver_kind::webhook;
  std::string url;         // webhook, slack, pagerduty: http(s)://host[:port]/path
  std::string secret;      // webhook: the HMAC-SHA256 key of X-Sreh-Signature ("" = unsigned)
  std::string routing_key; // pagerduty: the integration's routing key
  // email
  std::string smtp_host;
  std::uint16_t smtp_port = 587;
  std::string from;
  std::vector<std::string> to;
  std::string username, password; // AUTH PLAIN after STARTTLS, when set
  /// email: `required` (default: refuse a server that does not offer STARTTLS), `opportunistic`
  /// (use it when offered) or `off` (plain SMTP, a local relay).
  std::string starttls = "required";
  std::string ca_file; // TLS (https or STARTTLS): the CA to verify the server ("" = the system's)
  std::int64_t timeout_ms = 10'000;
};

/// A node of the routing tree. A notice enters at the top-level routes; at each level the first
/// route that matches takes it (and the next ones too while the matching routes say `continue`).
/// A route that matches descends into its `routes`; when none of them matches, the route itself
/// delivers to its receiver (a route with no receiver inherits its parent's).
struct route {
  /// Each key must equal: `event` (approval.requested, …), `severity`, `role` (one of the roles
  /// that may decide), `kind` (run or work), any other key a label of the run or Work.
  std::map<std::string, std::string, std::less<>> match;
  /// As `match`, with ECMAScript regular expressions that must match the whole value.
  std::map<std::string, std::string, std::less<>> match_re;
  std::string receiver;
  bool continue_ = false;
  /// Notices of one group (the values of these keys, as `match` reads them) go out once per
  /// `repeat_interval_s` to one receiver; those in between are recorded as grouped.
  /// Empty: every notice on its own.
  std::vector<std::string> group_by;
  std::int64_t repeat_interval_s = 0;
  std::vector<route> routes;
};

struct settings {
  static constexpr std::string_view section = "notify";

  std::vector<receiver> receivers;
  std::vector<route> routes;
  /// The base of the links in messages: the console / API as users reach it
  /// ("" = http://<the node's listen address>).
  std::string link_base;
  std::int64_t max_attempts = 12;      // then the delivery is dead-lettered (state failed)
  std::int64_t min_backoff_ms = 1'000; // after the first failed attempt; doubles each time
  std::int64_t max_backoff_ms = 300'000;
  std::int64_t poll_ms = 1'000; // how often the notifier looks when no commit woke it

  [[nodiscard]] bool enabled() const { return !receivers.empty() && !routes.empty(); }
  [[nodiscard]] const receiver* find(std::string_view name) const;
};

} // namespace sreh::notify
