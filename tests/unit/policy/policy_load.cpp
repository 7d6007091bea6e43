#define CAF_SUITE policy_load
#include <filesystem>
#include <string>

#include "config/policy/policy_config.hpp"
#include "tests/support/caf_test.hpp"

using namespace sreh;
using namespace sreh::config;
using namespace sreh::policy;

namespace {

std::filesystem::path examples_dir() {
  return std::filesystem::path{SREH_SOURCE_DIR} / "examples" / "policies";
}

/// The error of loading `yaml` as "p.yaml", or "(ok)".
std::string err(const std::string& yaml) {
  auto r = load_policy_string(yaml, "p.yaml");
  if (r)
    return "(ok)";
  if (r.error().code != errc::invalid_argument)
    return "(wrong code) " + r.error().message;
  return r.error().message;
}

timestamp_us at(const char* rfc3339) {
  return *parse_rfc3339(rfc3339);
}

} // namespace

CAF_TEST(empty text is the default policy) {
  for (const char* text : {"", "# nothing\n", "rules:\n"}) {
    auto r = load_policy_string(text, "p.yaml");
    CAF_REQUIRE(r.has_value());
    CAF_CHECK_EQUAL(std::string{to_string(r->default_mode)}, "review");
    CAF_CHECK(r->rules.empty());
    CAF_CHECK(r->scopes.empty());
    CAF_CHECK_EQUAL(r->default_approval.approvers, 1);
    CAF_CHECK_EQUAL(r->version.size(), 16u);
  }
}

CAF_TEST(the issue example loads) {
  auto r = load_policy_string(R"(
mode: review                 # default mode
scopes: {env:staging: autonomous, service:checkout: review}
default_approval: {approvers: 1, roles: [approver], timeout: 1h, on_timeout: deny}
rules:
  - id: freeze-weekend
    description: no changes on weekends
    when: {risks: [medium, high], during: [{days: [sat, sun]}]}
    effect: deny
  - id: drain-two-approvers
    when: {tools: [host.drain], min_blast_radius: 0.25}
    effect: require_approval
    approval: {approvers: 2, roles: [approver], timeout: 30m, on_timeout: escalate, escalate_to: [admin]}
  - id: restart-rate
    when: {tools: [service.restart], rate_limit: {max: 3, per: 1h, by: target}}
    effect: deny
    reason: at most 3 restarts per service per hour
  - id: scale-ok
    when: {tools: [service.scale], tiers: [standard, batch], labels: {team: web}, environments: [prod]}
    effect: allow
  - id: year-end
    when: {during: [{from: 2025-12-20T00:00:00Z, to: "2026-01-05T00:00:00Z"}, {days: [mon], from_hour: 22, to_hour: 6}]}
    effect: require_approval
)",
                              "p.yaml");
  if (!r)
    CAF_FAIL(r.error().message);
  const auto& p = *r;
  CAF_CHECK_EQUAL(std::string{to_string(p.default_mode)}, "review");
  CAF_CHECK_EQUAL(p.scopes.size(), 2u);
  CAF_CHECK(p.scopes.at("env:staging") == mode::autonomous);
  CAF_CHECK(p.scopes.at("service:checkout") == mode::review);
  CAF_CHECK_EQUAL(p.default_approval.timeout_s, 3600);
  CAF_REQUIRE_EQUAL(p.rules.size(), 5u);
  const auto& freeze = p.rules[0];
  CAF_CHECK_EQUAL(freeze.id, "freeze-weekend");
  CAF_CHECK_EQUAL(freeze.description, "no changes on weekends");
  CAF_CHECK_EQUAL(freeze.risks.size(), 2u);
  CAF_REQUIRE_EQUAL(freeze.during.size(), 1u);
  CAF_CHECK(freeze.during[0].days == (std::vector<int>{6, 0}));
  CAF_CHECK_EQUAL(freeze.during[0].from_hour, 0);
  CAF_CHECK_EQUAL(freeze.during[0].to_hour, 24);
  CAF_CHECK(freeze.effect == verdict::deny);
  const auto& drain = p.rules[1];
  CAF_CHECK(drain.effect == verdict::require_approval);
  CAF_CHECK(drain.min_blast_radius == 0.25);
  CAF_CHECK_EQUAL(drain.approval.approvers, 2);
  CAF_CHECK_EQUAL(drain.approval.timeout_s, 1800);
  CAF_CHECK_EQUAL(drain.approval.on_timeout, "escalate");
  CAF_CHECK(drain.approval.escalate_to == std::vector<std::string>{"admin"});
  const auto& rate = p.rules[2];
  CAF_REQUIRE(rate.limit.has_value());
  CAF_CHECK_EQUAL(rate.limit->max, 3);
  CAF_CHECK_EQUAL(rate.limit->per_s, 3600);
  CAF_CHECK_EQUAL(rate.limit->by, "target");
  CAF_CHECK_EQUAL(rate.reason, "at most 3 restarts per service per hour");
  const auto& scale = p.rules[3];
  CAF_CHECK(scale.tiers == (std::vector<std::string>{"standard", "batch"}));
  CAF_CHECK_EQUAL(scale.labels.at("team"), "web");
  CAF_CHECK(scale.environments == std::vector<std::string>{"prod"});
  const auto& year_end = p.rules[4];
  CAF_REQUIRE_EQUAL(year_end.during.size(), 2u);
  CAF_CHECK_EQUAL(year_end.during[0].from, at("2025-12-20T00:00:00Z"));
  CAF_CHECK_EQUAL(year_end.during[0].to, at("2026-01-05T00:00:00Z"));
  CAF_CHECK_EQUAL(year_end.during[1].from_hour, 22);
  CAF_CHECK_EQUAL(year_end.during[1].to_hour, 6);
  // A require_approval rule without its own approval takes the default.
  CAF_CHECK_EQUAL(year_end.approval.timeout_s, 3600);
  CAF_CHECK_EQUAL(longest_rate_window_s(p), 3600);
}

CAF_TEST(rule approvals inherit the default wherever it is written) {
  auto r = load_policy_string(R"(
rules:
  - id: two
    effect: require_approval
    approval: {approvers: 2}
default_approval: {roles: [admin], timeout: 2d, on_timeout: escalate, escalate_to: [admin]}
)",
                              "p.yaml");
  if (!r)
    CAF_FAIL(r.error().message);
  CAF_CHECK_EQUAL(r->rules[0].approval.approvers, 2);
  CAF_CHECK(r->rules[0].approval.roles == std::vector<std::string>{"admin"});
  CAF_CHECK_EQUAL(r->rules[0].approval.timeout_s, 2 * 86'400);
  CAF_CHECK_EQUAL(r->default_approval.approvers, 1);
}

CAF_TEST(the example files load) {
  for (const char* name : {"default.yaml", "autonomous.yaml"}) {
    auto path = (examples_dir() / name).string();
    auto r = load_policy_file(path);
    if (!r)
      CAF_FAIL(r.error().message);
    CAF_CHECK(!r->rules.empty());
    CAF_CHECK_EQUAL(longest_rate_window_s(*r), 3600);
  }
  auto r = load_policy_file((examples_dir() / "default.yaml").string());
  CAF_REQUIRE(r.has_value());
  CAF_CHECK(r->default_mode == mode::review);
  // Restarts: three in the last hour on the same service are denied.
  action a;
  a.tool = "service.restart";
  a.target = "checkout";
  a.risk = "medium";
  a.now = at("2024-01-10T12:00:00Z");
  CAF_CHECK(evaluate(*r, a).rule_id == "mode:review");
  for (int i = 1; i <= 3; ++i)
    a.history.push_back({"service.restart", "checkout", a.now - i * 60'000'000});
  CAF_CHECK_EQUAL(evaluate(*r, a).rule_id, "restart-rate");
  a.tool = "host.drain";
  a.risk = "high";
  auto d = evaluate(*r, a);
  CAF_CHECK_EQUAL(d.rule_id, "high-risk-two-approvers");
  CAF_CHECK_EQUAL(d.approval.approvers, 2);
}

CAF_TEST(the version is a hash of the text) {
  auto a = load_policy_string("mode: review\n", "p.yaml");
  auto b = load_policy_string("mode: review\n", "q.yaml");
  auto c = load_policy_string("mode: review # changed\n", "p.yaml");
  CAF_REQUIRE(a && b && c);
  CAF_CHECK_EQUAL(a->version, b->version);
  CAF_CHECK_NOT_EQUAL(a->version, c->version);
}

CAF_TEST(a missing file names the path) {
  auto r = load_policy_file("/nonexistent/p.yaml");
  CAF_REQUIRE(!r);
  CAF_CHECK_EQUAL(r.error().message, "/nonexistent/p.yaml: cannot read: No such file or directory");
}

// -- errors -------------------------------------------------------------------------------------

CAF_TEST(top level errors) {
  CAF_CHECK_EQUAL(err("- a\n"), "p.yaml:1:1: (top level): expected a mapping with mode, scopes, "
                                "default_approval, rules");
  CAF_CHECK_EQUAL(err("mode: reveiw\n"),
                  "p.yaml:1:7: mode: expected one of read_only, review, autonomous, got 'reveiw'");
  CAF_CHECK_EQUAL(err("mdoe: review\n"),
                  "p.yaml:1:1: mdoe: unknown key 'mdoe' (did you mean 'mode'?)");
  CAF_CHECK_EQUAL(err("mode: review\nmode: review\n"), "p.yaml:2:1: mode: duplicate key");
  CAF_CHECK_EQUAL(err("mode: [\n"), "p.yaml:2:1: invalid YAML: end of sequence flow not found");
  CAF_CHECK_EQUAL(err("rules: {id: x}\n"), "p.yaml:1:8: rules: expected a sequence (e.g. [a, b])");
}

CAF_TEST(scope errors) {
  CAF_CHECK_EQUAL(err("scopes: {prod: review}\n"),
                  "p.yaml:1:10: scopes.prod: expected a scope 'env:NAME' or 'service:NAME', got "
                  "'prod'");
  CAF_CHECK_EQUAL(err("scopes: {'env:': review}\n"),
                  "p.yaml:1:10: scopes.env:: expected a scope 'env:NAME' or 'service:NAME', got "
                  "'env:'");
  CAF_CHECK_EQUAL(err("scopes:\n  env:prod: yolo\n"),
                  "p.yaml:2:13: scopes.env:prod: expected one of read_only, review, autonomous, "
                  "got 'yolo'");
  CAF_CHECK_EQUAL(err("scopes:\n  env:prod: review\n  env:prod: review\n"),
                  "p.yaml:3:3: scopes.env:prod: duplicate key");
}

CAF_TEST(rule errors) {
  CAF_CHECK_EQUAL(err("rules:\n  - effect: deny\n"), "p.yaml:2:5: rules[0]: missing key 'id'");
  CAF_CHECK_EQUAL(err("rules:\n  - id: a\n"),
                  "p.yaml:2:5: rules[0]: missing key 'effect' (allow, require_approval or deny)");
  CAF_CHECK_EQUAL(err("rules:\n  - {id: a, effect: maybe}\n"),
                  "p.yaml:2:21: rules[0].effect: expected one of allow, require_approval, deny, "
                  "got 'maybe'");
  CAF_CHECK_EQUAL(err("rules:\n  - {id: a, effect: deny}\n  - {id: b, effect: deny}\n"
                      "  - {id: a, effect: allow}\n"),
                  "p.yaml:4:10: rules[2].id: duplicate rule id 'a' (first at p.yaml:2:10)");
  CAF_CHECK_EQUAL(err("rules:\n  - {id: 'mode:x', effect: deny}\n"),
                  "p.yaml:2:10: rules[0].id: expected letters, digits, '-', '_' or '.', got "
                  "'mode:x'");
  CAF_CHECK_EQUAL(err("rules:\n  - {id: a, effect: deny, approval: {approvers: 2}}\n"),
                  "p.yaml:2:27: rules[0].approval: is only used with effect: require_approval");
  CAF_CHECK_EQUAL(err("rules:\n  - {id: a, effect: deny, wehn: {}}\n"),
                  "p.yaml:2:27: rules[0].wehn: unknown key 'wehn' (did you mean 'when'?)");
  CAF_CHECK_EQUAL(err("rules:\n  - just-a-name\n"),
                  "p.yaml:2:5: rules[0]: expected a mapping with id, when, effect");
}

CAF_TEST(condition errors) {
  auto rule_with = [](const std::string& when) {
    return err("rules:\n  - id: a\n    effect: deny\n    when: " + when + "\n");
  };
  CAF_CHECK_EQUAL(rule_with("{tools: []}"), "p.yaml:4:19: rules[0].when.tools: must not be empty");
  CAF_CHECK_EQUAL(rule_with("{tools: service.restart}"),
                  "p.yaml:4:19: rules[0].when.tools: expected a sequence (e.g. [a, b])");
  CAF_CHECK_EQUAL(rule_with("{tools: [a, '']}"),
                  "p.yaml:4:23: rules[0].when.tools[1]: must not be empty");
  CAF_CHECK_EQUAL(rule_with("{risks: [low, extreme]}"),
                  "p.yaml:4:25: rules[0].when.risks[1]: expected one of read_only, low, medium, "
                  "high, got 'extreme'");
  CAF_CHECK_EQUAL(rule_with("{tiers: [gold]}"),
                  "p.yaml:4:20: rules[0].when.tiers[0]: expected one of critical, standard, "
                  "batch, got 'gold'");
  CAF_CHECK_EQUAL(rule_with("{min_blast_radius: 1.5}"),
                  "p.yaml:4:30: rules[0].when.min_blast_radius: expected a number between 0 and "
                  "1, got 1.5");
  CAF_CHECK_EQUAL(rule_with("{min_blast_radius: half}"),
                  "p.yaml:4:30: rules[0].when.min_blast_radius: expected a number between 0 and "
                  "1, got 'half'");
  CAF_CHECK_EQUAL(rule_with("{labels: [team]}"),
                  "p.yaml:4:20: rules[0].when.labels: expected a mapping of name: value");
  CAF_CHECK_EQUAL(rule_with("{labels: {team: {a: b}}}"),
                  "p.yaml:4:27: rules[0].when.labels.team: expected a string, got a mapping");
  CAF_CHECK_EQUAL(
    rule_with("{envs: [prod]}"),
    "p.yaml:4:12: rules[0].when.envs: unknown key 'envs' (expected one of tools, targets, "
    "risks, environments, tiers, labels, min_blast_radius, during, rate_limit)");
}

CAF_TEST(window errors) {
  auto during = [](const std::string& w) {
    return err("rules:\n  - id: a\n    effect: deny\n    when: {during: [" + w + "]}\n");
  };
  CAF_CHECK_EQUAL(during("{days: [saturday]}"),
                  "p.yaml:4:29: rules[0].when.during[0].days[0]: expected one of sun, mon, tue, "
                  "wed, thu, fri, sat, got 'saturday'");
  CAF_CHECK_EQUAL(during("{from_hour: 24}"),
                  "p.yaml:4:33: rules[0].when.during[0].from_hour: expected an integer between 0 "
                  "and 23, got 24");
  CAF_CHECK_EQUAL(during("{to_hour: 25}"),
                  "p.yaml:4:31: rules[0].when.during[0].to_hour: expected an integer between 0 "
                  "and 24, got 25");
  CAF_CHECK_EQUAL(during("{from_hour: 5, to_hour: 5}"),
                  "p.yaml:4:45: rules[0].when.during[0].to_hour: from_hour and to_hour must "
                  "differ (the window would be empty)");
  CAF_CHECK_EQUAL(during("{from: 2025-12-20}"),
                  "p.yaml:4:28: rules[0].when.during[0].from: expected an RFC 3339 time like "
                  "2025-12-24T00:00:00Z, got '2025-12-20'");
  CAF_CHECK_EQUAL(during("{from: 2025-12-20T00:00:00Z}"),
                  "p.yaml:4:21: rules[0].when.during[0]: missing key 'to' (an absolute window "
                  "needs from and to)");
  CAF_CHECK_EQUAL(during("{from: 2025-12-20T00:00:00Z, to: 2025-12-19T00:00:00Z}"),
                  "p.yaml:4:54: rules[0].when.during[0].to: must be after 'from'");
  CAF_CHECK_EQUAL(during("{days: [sat], from: 2025-12-20T00:00:00Z, to: 2025-12-21T00:00:00Z}"),
                  "p.yaml:4:28: rules[0].when.during[0].days: a window is weekly (days, hours) "
                  "or absolute (from, to), not both");
  CAF_CHECK_EQUAL(during("sat"),
                  "p.yaml:4:21: rules[0].when.during[0]: expected a mapping: {days, from_hour, "
                  "to_hour} or {from, to}");
}

CAF_TEST(rate limit errors) {
  auto limit = [](const std::string& l) {
    return err("rules:\n  - id: a\n    effect: deny\n    when: {rate_limit: " + l + "}\n");
  };
  CAF_CHECK_EQUAL(limit("{max: 3}"), "p.yaml:4:24: rules[0].when.rate_limit: missing key 'per'");
  CAF_CHECK_EQUAL(limit("{per: 1h}"), "p.yaml:4:24: rules[0].when.rate_limit: missing key 'max'");
  CAF_CHECK_EQUAL(limit("{max: 0, per: 1h}"),
                  "p.yaml:4:30: rules[0].when.rate_limit.max: expected an integer between 1 and "
                  "1000000, got 0");
  CAF_CHECK_EQUAL(limit("{max: 3, per: 1w}"),
                  "p.yaml:4:38: rules[0].when.rate_limit.per: expected a duration like 30s, 15m, "
                  "1h or 2d, got '1w'");
  CAF_CHECK_EQUAL(limit("{max: 3, per: 0s}"),
                  "p.yaml:4:38: rules[0].when.rate_limit.per: must be longer than 0");
  CAF_CHECK_EQUAL(limit("{max: 3, per: h}"),
                  "p.yaml:4:38: rules[0].when.rate_limit.per: expected a duration like 30s, 15m, "
                  "1h or 2d, got 'h'");
  CAF_CHECK_EQUAL(limit("{max: 3, per: 1h, by: host}"),
                  "p.yaml:4:46: rules[0].when.rate_limit.by: expected one of target, tool, got "
                  "'host'");
}

CAF_TEST(approval errors) {
  auto approval = [](const std::string& a) { return err("default_approval: " + a + "\n"); };
  CAF_CHECK_EQUAL(approval("{approvers: 0}"),
                  "p.yaml:1:31: default_approval.approvers: expected an integer between 1 and "
                  "100, got 0");
  CAF_CHECK_EQUAL(approval("{roles: [approver, root]}"),
                  "p.yaml:1:38: default_approval.roles[1]: expected one of viewer, operator, "
                  "approver, admin, got 'root'");
  CAF_CHECK_EQUAL(approval("{roles: []}"),
                  "p.yaml:1:27: default_approval.roles: must not be empty");
  CAF_CHECK_EQUAL(approval("{timeout: 90}"),
                  "p.yaml:1:29: default_approval.timeout: expected a duration like 30s, 15m, 1h "
                  "or 2d, got '90'");
  CAF_CHECK_EQUAL(approval("{on_timeout: escalate}"),
                  "p.yaml:1:32: default_approval.on_timeout: on_timeout: escalate needs "
                  "escalate_to (the roles to escalate to)");
  CAF_CHECK_EQUAL(approval("{escalate_to: [admin]}"),
                  "p.yaml:1:33: default_approval.escalate_to: is only used with on_timeout: "
                  "escalate");
  CAF_CHECK_EQUAL(approval("{on_timeout: later}"),
                  "p.yaml:1:32: default_approval.on_timeout: expected one of deny, escalate, got "
                  "'later'");
  CAF_CHECK_EQUAL(err("rules:\n  - id: a\n    effect: require_approval\n"
                      "    approval: {approvers: two}\n"),
                  "p.yaml:4:27: rules[0].approval.approvers: expected an integer, got 'two'");
}
