#pragma once
// `alertmanager:`, the node config's section of Alertmanager (docs/alertmanager.md): the webhook
// receiver (`POST /v1/alerts/alertmanager`), on when `receiver.template` names a Work template,
// and the alertmanager.alerts / alertmanager.silence tools, on when `url` is set. Registered by
// register_alertmanager_section (plugins/sections.hpp).

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace sreh::plugins::alertmanager {

struct settings {
  static constexpr std::string_view section = "alertmanager";
  /// The Alertmanager the alertmanager.* tools talk to (http://host:port[/prefix]); "" = none.
  std::string url;
  std::string host;
  std::uint16_t port = 0;
  std::string path_prefix;
  std::int64_t timeout_ms = 10'000;
  std::int64_t max_alerts_listed = 100; // alertmanager.alerts keeps this many (the rest: truncated)
  std::string receiver_template;        // the Work template a firing alert group opens
  /// A template field ← the alert label or annotation to take it from (default: the label or
  /// annotation of the field's own name; `alert` defaults to alertname, `summary` to the
  /// summary or description annotation).
  std::map<std::string, std::string> fields;
  /// A severity label's value → the choice of the template's `severity` field.
  std::map<std::string, std::string> severity = {
    {"critical", "sev1"}, {"page", "sev1"}, {"error", "sev2"}, {"high", "sev2"},
    {"warning", "sev3"},  {"warn", "sev3"}, {"info", "sev4"},  {"low", "sev4"}};
  std::int64_t max_alerts = 1000; // per notification; more is a 413
};

} // namespace sreh::plugins::alertmanager
