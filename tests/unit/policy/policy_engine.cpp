#define CAF_SUITE policy_engine
#include <string>

#include "core/policy/policy.hpp"
#include "tests/support/caf_test.hpp"

using namespace sreh;
using namespace sreh::policy;

namespace {

constexpr timestamp_us s = 1'000'000;

timestamp_us at(const char* rfc3339) {
  return *parse_rfc3339(rfc3339);
}

/// A mutating action on a Wednesday noon (UTC) in prod.
action mutating(std::string tool = "service.restart", std::string target = "checkout") {
  action a;
  a.tool = std::move(tool);
  a.target = std::move(target);
  a.risk = "medium";
  a.environment = "prod";
  a.tier = "standard";
  a.now = at("2024-01-10T12:00:00Z");
  return a;
}

rule make_rule(std::string id, verdict effect) {
  rule r;
  r.id = std::move(id);
  r.effect = effect;
  return r;
}

policy_set with_rule(rule r, mode m = mode::review) {
  policy_set p;
  p.default_mode = m;
  p.rules.push_back(std::move(r));
  return p;
}

/// "effect rule_id" of the decision, e.g. "deny freeze".
std::string verdict_of(const policy_set& p, const action& a) {
  auto d = evaluate(p, a);
  return std::string{to_string(d.effect)} + " " + d.rule_id;
}

} // namespace

// -- enums --------------------------------------------------------------------------------------

CAF_TEST(modes and verdicts print and parse) {
  for (auto m : {mode::read_only, mode::review, mode::autonomous})
    CAF_CHECK(parse_mode(to_string(m)) == m);
  CAF_CHECK(!parse_mode("yolo"));
  CAF_CHECK_EQUAL(std::string{to_string(verdict::require_approval)}, "require_approval");
  CAF_CHECK_EQUAL(std::string{to_string(verdict::allow)}, "allow");
  CAF_CHECK_EQUAL(std::string{to_string(verdict::deny)}, "deny");
}

// -- modes without rules ------------------------------------------------------------------------

CAF_TEST(an empty policy reviews changes and lets reads run) {
  policy_set p;
  auto d = evaluate(p, mutating());
  CAF_CHECK_EQUAL(std::string{to_string(d.effect)}, "require_approval");
  CAF_CHECK_EQUAL(d.rule_id, "mode:review");
  CAF_CHECK_EQUAL(d.reason, "mode review: mutating actions need approval");
  CAF_CHECK_EQUAL(d.approval.approvers, 1);
  auto read = mutating("service.status");
  read.risk = "read_only";
  CAF_CHECK_EQUAL(verdict_of(p, read), "allow mode:review");
}

CAF_TEST(each mode decides actions no rule matched) {
  policy_set p;
  p.default_approval.approvers = 3;
  p.default_mode = mode::read_only;
  auto d = evaluate(p, mutating());
  CAF_CHECK_EQUAL(verdict_of(p, mutating()), "deny mode:read_only");
  CAF_CHECK_EQUAL(d.reason, "mode read_only: only read-only tools may run");
  auto read = mutating("service.status");
  read.risk = "read_only";
  CAF_CHECK_EQUAL(verdict_of(p, read), "allow mode:read_only");
  p.default_mode = mode::review;
  CAF_CHECK_EQUAL(evaluate(p, mutating()).approval.approvers, 3);
  p.default_mode = mode::autonomous;
  CAF_CHECK_EQUAL(verdict_of(p, mutating()), "allow mode:autonomous");
}

CAF_TEST(the service scope wins over the environment scope over the default) {
  policy_set p;
  p.default_mode = mode::autonomous;
  p.scopes["env:prod"] = mode::review;
  p.scopes["service:checkout"] = mode::read_only;
  CAF_CHECK_EQUAL(verdict_of(p, mutating("service.restart", "checkout")), "deny mode:read_only");
  CAF_CHECK_EQUAL(verdict_of(p, mutating("service.restart", "cart")),
                  "require_approval mode:review");
  auto staging = mutating("service.restart", "cart");
  staging.environment = "staging";
  CAF_CHECK_EQUAL(verdict_of(p, staging), "allow mode:autonomous");
  p.scopes["env:staging"] = mode::read_only;
  CAF_CHECK_EQUAL(verdict_of(p, staging), "deny mode:read_only");
}

CAF_TEST(read_only is a ceiling no rule lifts) {
  auto allow = make_rule("scale-ok", verdict::allow);
  allow.tools = {"service.*"};
  auto p = with_rule(allow, mode::read_only);
  CAF_CHECK_EQUAL(verdict_of(p, mutating()), "deny mode:read_only");
  p.rules[0].effect = verdict::require_approval;
  CAF_CHECK_EQUAL(verdict_of(p, mutating()), "deny mode:read_only");
  p.rules[0].effect = verdict::deny;
  CAF_CHECK_EQUAL(verdict_of(p, mutating()), "deny scale-ok");
  // Under a looser scope the same rule allows.
  p.rules[0].effect = verdict::allow;
  p.scopes["env:prod"] = mode::review;
  CAF_CHECK_EQUAL(verdict_of(p, mutating()), "allow scale-ok");
}

CAF_TEST(a rule may deny read - only tools) {
  auto r = make_rule("no-secrets", verdict::deny);
  r.tools = {"secrets.read"};
  auto p = with_rule(r, mode::autonomous);
  auto read = mutating("secrets.read");
  read.risk = "read_only";
  CAF_CHECK_EQUAL(verdict_of(p, read), "deny no-secrets");
  read.tool = "logs.read";
  CAF_CHECK_EQUAL(verdict_of(p, read), "allow mode:autonomous");
}

// -- conditions ---------------------------------------------------------------------------------

CAF_TEST(tools match by exact name or glob) {
  auto r = make_rule("r", verdict::deny);
  auto p = with_rule(r, mode::autonomous);
  auto check = [&](std::vector<std::string> tools, const std::string& tool) {
    p.rules[0].tools = std::move(tools);
    return evaluate(p, mutating(tool)).rule_id == "r";
  };
  CAF_CHECK(check({"service.restart"}, "service.restart"));
  CAF_CHECK(!check({"service.restart"}, "service.restarts"));
  CAF_CHECK(check({"service.*"}, "service.scale"));
  CAF_CHECK(!check({"service.*"}, "host.drain"));
  CAF_CHECK(check({"*.drain"}, "host.drain"));
  CAF_CHECK(check({"*"}, "anything"));
  CAF_CHECK(check({"a*b*c"}, "axxbyyc"));
  CAF_CHECK(!check({"a*b*c"}, "axxbyy"));
  CAF_CHECK(check({"host.drain", "db.*"}, "db.failover"));
  CAF_CHECK(!check({"[a]"}, "a")); // no other glob syntax: literal
  CAF_CHECK(check({"[a]"}, "[a]"));
}

CAF_TEST(risks environments and tiers match by membership) {
  auto r = make_rule("r", verdict::deny);
  r.risks = {"high"};
  auto p = with_rule(r, mode::autonomous);
  auto a = mutating();
  CAF_CHECK_EQUAL(verdict_of(p, a), "allow mode:autonomous");
  a.risk = "high";
  CAF_CHECK_EQUAL(verdict_of(p, a), "deny r");
  p.rules[0].environments = {"staging", "dev"};
  CAF_CHECK_EQUAL(verdict_of(p, a), "allow mode:autonomous");
  a.environment = "dev";
  CAF_CHECK_EQUAL(verdict_of(p, a), "deny r");
  p.rules[0].tiers = {"critical"};
  CAF_CHECK_EQUAL(verdict_of(p, a), "allow mode:autonomous");
  a.tier = "critical";
  CAF_CHECK_EQUAL(verdict_of(p, a), "deny r");
  a.tier = ""; // unknown tier matches no tier condition
  CAF_CHECK_EQUAL(verdict_of(p, a), "allow mode:autonomous");
}

CAF_TEST(labels must all be equal) {
  auto r = make_rule("r", verdict::deny);
  r.labels = {{"team", "payments"}, {"sev", "1"}};
  auto p = with_rule(r, mode::autonomous);
  auto a = mutating();
  a.labels = {{"team", "payments"}};
  CAF_CHECK_EQUAL(verdict_of(p, a), "allow mode:autonomous");
  a.labels["sev"] = "2";
  CAF_CHECK_EQUAL(verdict_of(p, a), "allow mode:autonomous");
  a.labels["sev"] = "1";
  a.labels["extra"] = "x";
  CAF_CHECK_EQUAL(verdict_of(p, a), "deny r");
}

CAF_TEST(blast radius matches at or above the minimum) {
  auto r = make_rule("drain", verdict::require_approval);
  r.min_blast_radius = 0.25;
  r.approval.approvers = 2;
  auto p = with_rule(r, mode::autonomous);
  auto a = mutating("host.drain");
  a.blast_radius = 0.2;
  CAF_CHECK_EQUAL(verdict_of(p, a), "allow mode:autonomous");
  a.blast_radius = 0.25;
  auto d = evaluate(p, a);
  CAF_CHECK_EQUAL(verdict_of(p, a), "require_approval drain");
  CAF_CHECK_EQUAL(d.approval.approvers, 2);
  CAF_CHECK_EQUAL(d.reason,
                  "rule 'drain': needs 2 approvals (approver) (blast radius 0.25 >= 0.25)");
}

CAF_TEST(the first matching rule decides) {
  policy_set p;
  p.default_mode = mode::review;
  auto deny = make_rule("deny-high", verdict::deny);
  deny.risks = {"high"};
  auto allow = make_rule("allow-restart", verdict::allow);
  allow.tools = {"service.restart"};
  p.rules = {deny, allow};
  auto a = mutating();
  CAF_CHECK_EQUAL(verdict_of(p, a), "allow allow-restart");
  a.risk = "high";
  CAF_CHECK_EQUAL(verdict_of(p, a), "deny deny-high");
  std::swap(p.rules[0], p.rules[1]);
  CAF_CHECK_EQUAL(verdict_of(p, a), "allow allow-restart");
  // A rule with no conditions matches everything.
  p.rules.insert(p.rules.begin(), make_rule("catch-all", verdict::deny));
  CAF_CHECK_EQUAL(verdict_of(p, a), "deny catch-all");
}

// -- windows ------------------------------------------------------------------------------------

CAF_TEST(weekly windows follow the UTC weekday and hour) {
  auto r = make_rule("freeze-weekend", verdict::deny);
  r.during = {window{{6, 0}, 0, 24, 0, 0}}; // sat, sun
  auto p = with_rule(r, mode::autonomous);
  auto a = mutating();
  auto check = [&](const char* when) {
    a.now = at(when);
    return evaluate(p, a).rule_id;
  };
  CAF_CHECK_EQUAL(check("2024-01-05T23:59:59Z"), "mode:autonomous"); // Friday
  CAF_CHECK_EQUAL(check("2024-01-06T00:00:00Z"), "freeze-weekend");  // Saturday
  CAF_CHECK_EQUAL(check("2024-01-07T23:59:59Z"), "freeze-weekend");  // Sunday
  CAF_CHECK_EQUAL(check("2024-01-08T00:00:00Z"), "mode:autonomous"); // Monday
  CAF_CHECK_EQUAL(check("1969-12-28T12:00:00Z"), "freeze-weekend");  // a Sunday before the epoch
  a.now = at("2024-01-06T10:00:00Z");
  CAF_CHECK_EQUAL(evaluate(p, a).reason,
                  "rule 'freeze-weekend': change freeze (Sat-Sun 00-24 UTC)");
}

CAF_TEST(weekly hours are half open and may wrap midnight) {
  auto r = make_rule("night", verdict::deny);
  r.during = {window{{}, 22, 6, 0, 0}};
  auto p = with_rule(r, mode::autonomous);
  auto a = mutating();
  auto check = [&](const char* when) {
    a.now = at(when);
    return evaluate(p, a).rule_id;
  };
  CAF_CHECK_EQUAL(check("2024-01-10T21:59:59Z"), "mode:autonomous");
  CAF_CHECK_EQUAL(check("2024-01-10T22:00:00Z"), "night");
  CAF_CHECK_EQUAL(check("2024-01-11T05:59:59Z"), "night");
  CAF_CHECK_EQUAL(check("2024-01-11T06:00:00Z"), "mode:autonomous");
  p.rules[0].during = {window{{1, 3}, 9, 17, 0, 0}};       // Mon and Wed, 09-17
  CAF_CHECK_EQUAL(check("2024-01-10T09:00:00Z"), "night"); // Wednesday
  CAF_CHECK_EQUAL(check("2024-01-10T17:00:00Z"), "mode:autonomous");
  CAF_CHECK_EQUAL(check("2024-01-09T12:00:00Z"), "mode:autonomous"); // Tuesday
  a.now = at("2024-01-08T12:00:00Z");
  CAF_CHECK_EQUAL(evaluate(p, a).reason, "rule 'night': change freeze (Mon,Wed 09-17 UTC)");
}

CAF_TEST(absolute windows include from and exclude to) {
  auto r = make_rule("year-end", verdict::deny);
  r.during = {window{{}, 0, 24, at("2023-12-20T00:00:00Z"), at("2024-01-05T00:00:00Z")}};
  auto p = with_rule(r, mode::autonomous);
  auto a = mutating();
  auto check = [&](const char* when) {
    a.now = at(when);
    return evaluate(p, a).rule_id;
  };
  CAF_CHECK_EQUAL(check("2023-12-19T23:59:59Z"), "mode:autonomous");
  CAF_CHECK_EQUAL(check("2023-12-20T00:00:00Z"), "year-end");
  CAF_CHECK_EQUAL(check("2024-01-04T23:59:59Z"), "year-end");
  CAF_CHECK_EQUAL(check("2024-01-05T00:00:00Z"), "mode:autonomous");
  a.now = at("2024-01-01T00:00:00Z");
  CAF_CHECK_EQUAL(evaluate(p, a).reason,
                  "rule 'year-end': change freeze (2023-12-20T00:00:00Z to 2024-01-05T00:00:00Z)");
  // Any of several windows.
  p.rules[0].during.push_back(window{{3}, 0, 24, 0, 0});
  CAF_CHECK_EQUAL(check("2024-01-10T12:00:00Z"), "year-end");
}

// -- rate limits --------------------------------------------------------------------------------

CAF_TEST(rate limits count matching actions inside the window) {
  auto r = make_rule("restart-rate", verdict::deny);
  r.tools = {"service.restart"};
  r.limit = rate_limit{3, 3600, "target"};
  auto p = with_rule(r, mode::autonomous);
  auto a = mutating("service.restart", "checkout");
  auto past = [&](std::string tool, std::string target, timestamp_us ago) {
    a.history.push_back({std::move(tool), std::move(target), a.now - ago});
  };
  past("service.restart", "checkout", 10 * s);
  past("service.restart", "checkout", 20 * s);
  CAF_CHECK_EQUAL(verdict_of(p, a), "allow mode:autonomous");
  past("service.restart", "cart", 30 * s);       // other target
  past("service.scale", "checkout", 30 * s);     // other tool
  past("service.restart", "checkout", 3600 * s); // exactly one window ago: outside
  CAF_CHECK_EQUAL(verdict_of(p, a), "allow mode:autonomous");
  past("service.restart", "checkout", 3599 * s); // just inside
  auto d = evaluate(p, a);
  CAF_CHECK_EQUAL(verdict_of(p, a), "deny restart-rate");
  CAF_CHECK_EQUAL(d.reason,
                  "rule 'restart-rate': 3 service.restart on checkout in the last 3600 s (max 3)");
  p.rules[0].reason = "at most 3 restarts per service per hour";
  CAF_CHECK_EQUAL(evaluate(p, a).reason,
                  "rule 'restart-rate': at most 3 restarts per service per hour");
}

CAF_TEST(rate limits by tool count every target) {
  auto r = make_rule("scale-rate", verdict::require_approval);
  r.tools = {"service.scale*"};
  r.limit = rate_limit{2, 60, "tool"};
  auto p = with_rule(r, mode::autonomous);
  auto a = mutating("service.scale", "checkout");
  a.history = {{"service.scale", "cart", a.now - 5 * s},
               {"service.scale_down", "search", a.now - 59 * s},
               {"service.scale", "cart", a.now - 61 * s}};
  CAF_CHECK_EQUAL(verdict_of(p, a), "require_approval scale-rate");
  CAF_CHECK_EQUAL(evaluate(p, a).reason,
                  "rule 'scale-rate': 2 service.scale* in the last 60 s (max 2)");
  a.history.pop_back();
  a.history.pop_back();
  CAF_CHECK_EQUAL(verdict_of(p, a), "allow mode:autonomous");
}

CAF_TEST(the longest rate window spans every limited rule) {
  policy_set p;
  CAF_CHECK_EQUAL(longest_rate_window_s(p), 0);
  p.rules.push_back(make_rule("plain", verdict::deny));
  CAF_CHECK_EQUAL(longest_rate_window_s(p), 0);
  auto a = make_rule("a", verdict::deny);
  a.limit = rate_limit{3, 3600, "target"};
  auto b = make_rule("b", verdict::deny);
  b.limit = rate_limit{1, 86'400, "tool"};
  p.rules.push_back(a);
  p.rules.push_back(b);
  CAF_CHECK_EQUAL(longest_rate_window_s(p), 86'400);
}

// -- reasons ------------------------------------------------------------------------------------

CAF_TEST(default reasons name the rule and what matched) {
  auto r = make_rule("scale-ok", verdict::allow);
  r.tools = {"service.scale"};
  r.tiers = {"standard", "batch"};
  auto p = with_rule(r);
  auto d = evaluate(p, mutating("service.scale"));
  CAF_CHECK_EQUAL(d.reason, "rule 'scale-ok': allowed (tool service.scale, tier standard)");
  p.rules[0] = make_rule("no-prod", verdict::deny);
  p.rules[0].environments = {"prod"};
  p.rules[0].labels = {{"team", "x"}};
  auto a = mutating();
  a.labels = {{"team", "x"}};
  CAF_CHECK_EQUAL(evaluate(p, a).reason, "rule 'no-prod': denied (environment prod, label team=x)");
  p.rules[0] = make_rule("all", verdict::require_approval);
  d = evaluate(p, a);
  CAF_CHECK_EQUAL(d.reason, "rule 'all': needs 1 approval (approver)");
  CAF_CHECK_EQUAL(d.rule_id, "all");
}
