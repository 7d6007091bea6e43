// Alertmanager's webhook (plugins/sre/alertmanager/webhook.hpp) and the merge of alert
// statuses into a Work (core/works/lifecycle.hpp): times as Go writes them, the fields a
// notification gives a template, repeats that change nothing.
#define CAF_SUITE alertmanager_webhook
#include <caf/test/unit_test.hpp>

#include "config/templates/template_file.hpp"
#include "core/base/json.hpp"
#include "core/works/lifecycle.hpp"
#include "plugins/sre/alertmanager/webhook.hpp"

using namespace sreh;
using namespace sreh::plugins::alertmanager;

namespace {

std::string payload(const std::string& alerts, const std::string& common = R"({"alertname":"A"})") {
  return R"({"version":"4","groupKey":"g","status":"firing","receiver":"r","commonLabels":)" +
         common + R"(,"alerts":)" + alerts + "}";
}

std::string one_alert(const std::string& starts, const std::string& labels = "{}") {
  return R"([{"status":"firing","labels":)" + labels +
         R"(,"annotations":{"summary":"s"},"startsAt":")" + starts +
         R"(","endsAt":"0001-01-01T00:00:00Z","fingerprint":"f1"}])";
}

works::work_template tmpl() {
  auto t = config::load_template_string(
    "template: t\nkind: incident\nfields:\n  service: {type: string, required: true}\n"
    "  alert: {type: string}\n  summary: {type: string}\n"
    "  severity: {type: choice, values: [sev1, sev2, sev3], default: sev3}\n"
    "  replicas: {type: integer, default: 1}\nrun: {goal: \"fix {service}\"}\n",
    "t.yaml");
  CAF_REQUIRE(t.has_value());
  return *t;
}

} // namespace

CAF_TEST(times are read as Go writes them) {
  auto a = parse_webhook(payload(one_alert("2026-12-01T10:00:00.123456789Z")), 10);
  CAF_REQUIRE(a.has_value());
  auto b = parse_webhook(payload(one_alert("2026-12-01T11:00:00.123456+01:00")), 10);
  CAF_REQUIRE(b.has_value());
  CAF_CHECK_EQUAL(a->alerts[0].starts_at, b->alerts[0].starts_at);
  CAF_CHECK_EQUAL(a->alerts[0].starts_at % 1'000'000, 123456);
  CAF_CHECK_EQUAL(a->alerts[0].ends_at, 0); // Go's zero time
  auto bad = parse_webhook(payload(one_alert("2026-12-01 10:00")), 10);
  CAF_REQUIRE(!bad.has_value());
  CAF_CHECK_EQUAL(bad.error().message,
                  "alerts[0].startsAt: expected an RFC 3339 time, got '2026-12-01 10:00'");
  auto many = parse_webhook(payload(one_alert("2026-12-01T10:00:00Z")), 0);
  CAF_CHECK_EQUAL(many.error().code, errc::too_large);
}

CAF_TEST(fields come from labels and annotations and severities are mapped) {
  auto n = parse_webhook(
    payload(one_alert("2026-12-01T10:00:00Z",
                      R"({"service":"cart","severity":"critical","replicas":"3","team":"x"})")),
    10);
  CAF_REQUIRE(n.has_value());
  settings cfg;
  CAF_CHECK_EQUAL(work_fields(*n, tmpl(), cfg),
                  R"({"service":"cart","alert":"A","summary":"s","severity":"sev1",)"
                  R"("replicas":3})");
  cfg.fields["service"] = "team"; // mapped to another label
  cfg.severity.clear();           // critical is no choice and no mapping: the default applies
  CAF_CHECK_EQUAL(work_fields(*n, tmpl(), cfg),
                  R"({"service":"x","alert":"A","summary":"s","replicas":3})");
}

CAF_TEST(alert statuses merge and a repeat changes nothing) {
  works::work w;
  auto first = works::merge_alerts(w, "am", R"({"alerts":{"a":"firing","b":"firing"}})", 1);
  CAF_REQUIRE(first.has_value());
  CAF_REQUIRE_EQUAL(first->entries.size(), 1u);
  CAF_CHECK_EQUAL(w.alerts, R"({"a":"firing","b":"firing"})");
  auto repeat = works::merge_alerts(w, "am", R"({"alerts":{"a":"firing","b":"firing"}})", 2);
  CAF_CHECK(repeat->entries.empty());
  auto resolved = works::merge_alerts(w, "am", R"({"alerts":{"a":"resolved"}})", 3);
  CAF_REQUIRE_EQUAL(resolved->entries.size(), 1u);
  auto data = json::parse(resolved->entries[0].data);
  CAF_CHECK_EQUAL((*data)["still_firing"].GetInt64(), 1);
  CAF_CHECK_EQUAL(w.alerts, R"({"a":"resolved","b":"firing"})");
  auto bad = works::merge_alerts(w, "am", R"({"alerts":{"a":"gone"}})", 4);
  CAF_CHECK_EQUAL(bad.error().code, errc::invalid_argument);
  CAF_CHECK_EQUAL(w.alerts, R"({"a":"resolved","b":"firing"})");
}
