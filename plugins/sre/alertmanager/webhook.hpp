#pragma once
// Alertmanager's webhook notification (version 4; ../shared/refs/alertmanager/webhook.go): the
// parser, and how a notification becomes an incident Work — its fields from the alerts' labels
// and annotations, and the alert statuses to merge into it.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/clock.hpp"
#include "core/base/expected.hpp"
#include "core/works/template.hpp"
#include "plugins/sre/alertmanager/settings.hpp"

namespace sreh::plugins::alertmanager {

using label_set = std::map<std::string, std::string>;

struct alert {
  std::string status; // firing | resolved
  label_set labels;
  label_set annotations;
  timestamp_us starts_at = 0;
  timestamp_us ends_at = 0; // 0: none (Alertmanager sends 0001-01-01T00:00:00Z)
  std::string generator_url;
  std::string fingerprint;
};

struct notification {
  std::string version; // "4"
  std::string group_key;
  std::int64_t truncated = 0; // alerts Alertmanager left out (max_alerts)
  std::string status;         // firing | resolved: of the group
  std::string receiver;
  label_set group_labels;
  label_set common_labels;
  label_set common_annotations;
  std::string external_url;
  std::vector<alert> alerts;
};

/// Parses a webhook body. Members later versions added (notification_reason, ...) are ignored;
/// a missing required member, a wrong type, a status other than firing/resolved, a bad time or
/// more than `max_alerts` alerts is an error naming the member (`alerts[2].fingerprint:
/// expected a string, got number`): `invalid_argument`, or `too_large` for the count.
[[nodiscard]] expected<notification> parse_webhook(std::string_view body, std::int64_t max_alerts,
                                                   int max_depth = 32);

/// The fields of a Work of template `t` for `n` (a JSON object): each field from the label or
/// annotation `cfg.fields` names for it (by default the one of its own name; `alert` from
/// alertname, `summary` from the summary or description annotation), looked up in the common
/// labels, the group labels, the common annotations, then the first firing alert's. A choice
/// takes a value it lists, or the `severity` table's mapping of it; a value that fits the field
/// nowhere is left out (the template's default applies).
[[nodiscard]] std::string work_fields(const notification& n, const works::work_template& t,
                                      const settings& cfg);

/// The statuses to merge into the Work (works::merge_alerts): {"alerts": {...}, "truncated": N}.
[[nodiscard]] std::string alert_statuses(const notification& n);

} // namespace sreh::plugins::alertmanager
