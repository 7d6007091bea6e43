#define CAF_SUITE work_templates
#include <caf/test/unit_test.hpp>

#include <string>

#include "config/templates/template_file.hpp"

using namespace sreh;
using namespace sreh::works;

namespace {

const std::string good = R"(template: db-failover
version: "7"
kind: change
title: "fail over {db} to {replica}"
fields:
  db: {type: string, required: true}
  replica: {type: string, default: standby}
  lag_s: {type: integer, default: 30}
  dry_run: {type: boolean, default: false}
  risk: {type: choice, values: [low, high], default: low}
sla: {acknowledge: 5m, mitigate: 30m, resolve: 2h}
run:
  goal: "fail {db} over to {replica} with at most {lag_s} s of lag"
  labels: {db: "{db}", risk: "{risk}"}
policy: changes
done: "{replica}.error_rate < 0.01 and {db}.connections <= 5 for 10m"
double_texting: reject
)";

/// The error of loading `text` as t.yaml, or "(ok)".
std::string err(const std::string& text) {
  auto t = config::load_template_string(text, "t.yaml");
  return t ? "(ok)" : t.error().message;
}

/// `good` with the line starting `key` replaced.
std::string with(const std::string& key, const std::string& line) {
  auto text = good;
  auto at = text.find("\n" + key);
  auto end = text.find('\n', at + 1);
  return text.replace(at + 1, end - at - 1, line);
}

} // namespace

CAF_TEST(a template loads with its fields and clocks) {
  auto t = config::load_template_string(good, "t.yaml");
  CAF_REQUIRE(t.has_value());
  CAF_CHECK_EQUAL(t->name, std::string{"db-failover"});
  CAF_CHECK_EQUAL(t->kind, std::string{"change"});
  CAF_CHECK_EQUAL(t->label, std::string{"7"});
  CAF_CHECK_EQUAL(t->version.size(), 16u);
  CAF_REQUIRE_EQUAL(t->fields.size(), 5u);
  CAF_CHECK(t->fields[0].required);
  CAF_CHECK_EQUAL(*t->fields[2].default_value, std::string{"30"});
  CAF_CHECK_EQUAL(t->sla.acknowledge_ms, 300'000);
  CAF_CHECK_EQUAL(t->sla.resolve_ms, 7'200'000);
  CAF_CHECK_EQUAL(t->policy_scope, std::string{"changes"});
  CAF_CHECK(t->on_trigger == double_texting::reject);
  CAF_REQUIRE(t->done.has_value());
  CAF_CHECK_EQUAL(t->done->for_s, 600);
  CAF_CHECK_EQUAL(t->done->condition.text,
                  std::string{"{replica}.error_rate < 0.01 and {db}.connections <= 5"});
  // Another text is another version: a Work stays pinned to the one it was made from.
  auto t2 = config::load_template_string(good + "# edited\n", "t.yaml");
  CAF_REQUIRE(t2.has_value());
  CAF_CHECK_NOT_EQUAL(t->version, t2->version);
}

CAF_TEST(fields resolve with types and defaults and render the texts) {
  auto t = config::load_template_string(good, "t.yaml");
  CAF_REQUIRE(t.has_value());
  auto f = resolve_fields(*t, R"({"db": "orders-db", "lag_s": 5, "risk": "high"})");
  CAF_REQUIRE(f.has_value());
  CAF_CHECK_EQUAL(f->at("replica"), std::string{"standby"});
  CAF_CHECK_EQUAL(f->at("dry_run"), std::string{"false"});
  auto goal = render(t->goal.text, *f);
  auto title = render(t->title.text, *f);
  CAF_REQUIRE(goal.has_value() && title.has_value());
  CAF_CHECK_EQUAL(*goal, std::string{"fail orders-db over to standby with at most 5 s of lag"});
  CAF_CHECK_EQUAL(*title, std::string{"fail over orders-db to standby"});
  auto bad = [&](const char* json) {
    auto r = resolve_fields(*t, json);
    return r ? std::string{"(ok)"} : r.error().message;
  };
  CAF_CHECK_EQUAL(bad(R"({})"), std::string{"fields.db: missing (template 'db-failover' "
                                            "requires it)"});
  CAF_CHECK_EQUAL(bad(R"({"db": "x", "lag_s": "5"})"),
                  std::string{"fields.lag_s: expected an integer, got string"});
  CAF_CHECK_EQUAL(bad(R"({"db": "x", "lag_s": 1.5})"),
                  std::string{"fields.lag_s: expected an integer, got number"});
  CAF_CHECK_EQUAL(bad(R"({"db": "x", "risk": "medium"})"),
                  std::string{"fields.risk: expected one of low, high, got 'medium'"});
  CAF_CHECK_EQUAL(bad(R"({"db": "x", "owner": "me"})"),
                  std::string{"fields.owner: template 'db-failover' has no such field (its "
                              "fields: db, replica, lag_s, dry_run, risk)"});
  CAF_CHECK_EQUAL(bad(R"([1])"), std::string{"fields: expected a JSON object, got array"});
}

CAF_TEST(texts escape braces and name missing values) {
  auto braces = render("{{literal}} {a}", {{"a", "x"}});
  CAF_REQUIRE(braces.has_value());
  CAF_CHECK_EQUAL(*braces, std::string{"{literal} x"});
  auto missing = render("{a} {b}", {{"a", "x"}});
  CAF_REQUIRE(!missing.has_value());
  CAF_CHECK_EQUAL(missing.error().message, std::string{"no value for field 'b'"});
  auto open = placeholders("x {a");
  CAF_REQUIRE(!open.has_value());
  CAF_CHECK_EQUAL(open.error().message,
                  std::string{"position 3: '{' is not closed (write '{{' for a brace)"});
}

CAF_TEST(every kind of error names the file line and column) {
  CAF_CHECK_EQUAL(err(with("kind", "kind: outage")),
                  std::string{"t.yaml:3:7: kind: unknown kind 'outage' (expected one of "
                              "incident, change, maintenance, investigation)"});
  CAF_CHECK_EQUAL(err(with("double_texting", "double_texting: queue")),
                  std::string{"t.yaml:17:17: double_texting: expected one of enqueue, join, "
                              "interrupt, reject, got 'queue'"});
  CAF_CHECK_EQUAL(
    err(with("title", "title: \"fail over {database}\"")),
    std::string{"t.yaml:4:8: title: unknown field 'database' (expected one of db, replica, "
                "lag_s, dry_run, risk)"});
  CAF_CHECK_EQUAL(err(with("  lag_s", "  lag_s: {type: integer, default: soon}")),
                  std::string{"t.yaml:8:35: fields.lag_s.default: expected an integer, got "
                              "'soon'"});
  CAF_CHECK_EQUAL(err(with("  risk", "  risk: {type: choice, default: low}")),
                  std::string{"t.yaml:10:9: fields.risk: a field of type choice needs 'values'"});
  CAF_CHECK_EQUAL(err(with("  db", "  db: {type: text, required: true}")),
                  std::string{"t.yaml:6:14: fields.db.type: expected one of string, integer, "
                              "number, boolean, choice, got 'text'"});
  CAF_CHECK_EQUAL(err(with("sla", "sla: {acknowledge: 5m, mitigate: 3h, resolve: 2h}")),
                  std::string{"t.yaml:11:6: sla: mitigate is due after resolve"});
  CAF_CHECK_EQUAL(err(with("sla", "sla: {acknowledge: 5 minutes}")),
                  std::string{"t.yaml:11:20: sla.acknowledge: expected a duration like 30s, 15m, "
                              "1h or 2d, got '5 minutes'"});
  CAF_CHECK_EQUAL(err(with("done", "done: \"{db}.connections <= \"")),
                  std::string{"t.yaml:16:7: done: in '{db}.connections <= ': position 18: "
                              "expected a number after '<='"});
  CAF_CHECK_EQUAL(err(with("done", "done: \"{db}.connections < 5 for ever\"")),
                  std::string{"t.yaml:16:7: done: expected a duration like 30s, 5m or 1h after "
                              "'for', got 'ever'"});
  CAF_CHECK_EQUAL(err(good + "polcy: x\n"),
                  std::string{"t.yaml:18:1: polcy: unknown key 'polcy' (did you mean 'policy'?)"});
  CAF_CHECK_EQUAL(err("kind: incident\nrun: {goal: x}\n"),
                  std::string{"t.yaml:1:1: (top level): missing key 'template'"});
  CAF_CHECK_EQUAL(err("- a\n"), std::string{"t.yaml:1:1: (top level): expected a mapping with "
                                            "template, kind, fields, run, ..."});
}

CAF_TEST(the example incident template loads) {
  auto t =
    config::load_template_file(std::string{SREH_SOURCE_DIR} + "/examples/templates/incident.yaml");
  CAF_REQUIRE(t.has_value());
  CAF_CHECK_EQUAL(t->name, std::string{"incident"});
  CAF_CHECK(t->field("service") && t->field("alert") && t->field("summary"));
  auto dir = config::load_template_dir(std::string{SREH_SOURCE_DIR} + "/examples/templates");
  CAF_REQUIRE(dir.has_value());
  CAF_CHECK_EQUAL(dir->size(), 1u);
}

CAF_TEST(a kind a plugin registers asks its templates for its fields) {
  works::kind_registry kinds;
  kinds.add({"change", "", {{"rollback", works::field_type::string, "a change states how"}}});
  kinds.add({"rollout", "a progressive rollout", {}});
  const std::string base = "template: t\nkind: KIND\nfields: {target: {type: string}}\n"
                           "run: {goal: \"change {target}\"}\n";
  auto with_kind = [&](const std::string& k) {
    auto text = base;
    text.replace(text.find("KIND"), 4, k);
    return config::load_template_string(text, "t.yaml", {&kinds});
  };
  auto change = with_kind("change");
  CAF_REQUIRE(!change.has_value());
  CAF_CHECK_EQUAL(change.error().message,
                  std::string{"t.yaml:2:7: kind: a template of kind change needs a field "
                              "'rollback' of type string (a change states how)"});
  CAF_CHECK(with_kind("rollout").has_value()); // a kind of the plugin's own
  CAF_CHECK(with_kind("maintenance").has_value());
  // Without the registry only the builtin kinds, asking nothing.
  auto text = base;
  text.replace(text.find("KIND"), 4, "rollout");
  auto builtin = config::load_template_string(text, "t.yaml");
  CAF_REQUIRE(!builtin.has_value());
  CAF_CHECK(builtin.error().message.find("unknown kind 'rollout'") != std::string::npos);
}
