// Alertmanager webhook bodies: parsed, or refused with an error naming the member; a parsed one
// maps onto the incident template's fields (always a JSON object) and its statuses merge into
// a Work (never refused: the parser checked them).
#include <string>

#include "config/templates/template_file.hpp"
#include "core/base/json.hpp"
#include "core/works/lifecycle.hpp"
#include "plugins/sre/alertmanager/webhook.hpp"
#include "tests/fuzz/fuzz.hpp"

namespace {

const sreh::works::work_template& incident() {
  static const auto t = *sreh::config::load_template_string(
    "template: incident\nkind: incident\n"
    "fields:\n  service: {type: string, required: true}\n  alert: {type: string}\n"
    "  severity: {type: choice, values: [sev1, sev2, sev3], default: sev3}\n"
    "  replicas: {type: integer, default: 1}\n"
    "run: {goal: \"fix {service}\"}\n",
    "incident.yaml");
  return t;
}

} // namespace

void fuzz_one(std::string_view input) {
  using namespace sreh;
  auto n = plugins::alertmanager::parse_webhook(input, 1000);
  if (!n) {
    SREH_FUZZ_CHECK(!n.error().message.empty());
    return;
  }
  SREH_FUZZ_CHECK(!n->alerts.empty());
  auto fields =
    plugins::alertmanager::work_fields(*n, incident(), plugins::alertmanager::settings{});
  SREH_FUZZ_CHECK(json::parse_object(fields).has_value());
  works::work w;
  auto fx = works::merge_alerts(w, "fuzz", plugins::alertmanager::alert_statuses(*n), 1);
  SREH_FUZZ_CHECK(fx.has_value());
  SREH_FUZZ_CHECK(json::parse_object(w.alerts).has_value());
}
