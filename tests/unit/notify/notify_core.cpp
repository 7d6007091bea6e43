#define CAF_SUITE notify_core
#include <caf/test/unit_test.hpp>

#include <string>

#include "core/base/json.hpp"
#include "core/base/sha256.hpp"
#include "core/notify/notice.hpp"
#include "core/notify/render.hpp"
#include "core/notify/routing.hpp"

using namespace sreh;
using namespace sreh::notify;

namespace {

notice make(std::string ev, std::string severity = "", std::vector<std::string> roles = {}) {
  notice n;
  n.event = std::move(ev);
  n.event_id = "evt_01";
  n.subject = "run_01";
  n.subject_kind = "run";
  n.severity = std::move(severity);
  n.roles = std::move(roles);
  n.labels["team"] = "payments";
  n.title = "Approval needed: service.restart (run_01)";
  n.link = "http://127.0.0.1:8080/v1/runs/run_01";
  return n;
}

route to(std::string receiver, std::map<std::string, std::string, std::less<>> match = {}) {
  route r;
  r.receiver = std::move(receiver);
  r.match = std::move(match);
  return r;
}

std::vector<std::string> receivers(const std::vector<routed>& rs) {
  std::vector<std::string> out;
  for (const auto& r : rs)
    out.push_back(r.receiver);
  return out;
}

} // namespace

CAF_TEST(hmac sha256 matches RFC 4231 test case 2) {
  CAF_CHECK_EQUAL(hmac_sha256_hex("Jefe", "what do ya want for nothing?"),
                  "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

CAF_TEST(the first matching route takes a notice unless it says continue) {
  std::vector<route> routes{to("oncall", {{"event", "approval.requested"}}), to("all")};
  CAF_CHECK_EQUAL(receivers(route_notice(routes, make("approval.requested"))),
                  std::vector<std::string>{"oncall"});
  CAF_CHECK_EQUAL(receivers(route_notice(routes, make("run.failed"))),
                  std::vector<std::string>{"all"});
  routes[0].continue_ = true;
  CAF_CHECK_EQUAL(receivers(route_notice(routes, make("approval.requested"))),
                  (std::vector<std::string>{"oncall", "all"}));
}

CAF_TEST(a route descends into its children and delivers itself when none matches) {
  route parent = to("team", {{"team", "payments"}});
  parent.routes.push_back(to("pager", {{"severity", "page"}}));
  parent.routes.push_back(to("", {{"event", "work.opened"}})); // inherits "team"
  std::vector<route> routes{parent};
  CAF_CHECK_EQUAL(receivers(route_notice(routes, make("run.failed", "page"))),
                  std::vector<std::string>{"pager"});
  CAF_CHECK_EQUAL(receivers(route_notice(routes, make("work.opened"))),
                  std::vector<std::string>{"team"});
  CAF_CHECK_EQUAL(receivers(route_notice(routes, make("run.failed"))),
                  std::vector<std::string>{"team"});
  auto other = make("run.failed");
  other.labels["team"] = "search";
  CAF_CHECK(route_notice(routes, other).empty());
}

CAF_TEST(role matches any of the roles that may decide and regexes match whole values) {
  route r = to("approvers", {{"role", "approver"}});
  CAF_CHECK(matches(r, make("approval.requested", "", {"operator", "approver"})));
  CAF_CHECK(!matches(r, make("approval.requested", "", {"admin"})));
  route re = to("x");
  re.match_re["event"] = "approval\\..*";
  CAF_CHECK(matches(re, make("approval.expired")));
  CAF_CHECK(!matches(re, make("work.opened")));
  re.match_re["event"] = "approval";
  CAF_CHECK(!matches(re, make("approval.expired"))); // whole value, not a substring
}

CAF_TEST(the group key names the keys and their values) {
  CAF_CHECK_EQUAL(group_key({"event", "team"}, make("run.failed")),
                  "event=run.failed,team=payments");
  CAF_CHECK_EQUAL(group_key({}, make("run.failed")), "");
}

CAF_TEST(retry delays double up to the maximum) {
  CAF_CHECK_EQUAL(retry_delay_ms(1, 1000, 300000), 1000);
  CAF_CHECK_EQUAL(retry_delay_ms(2, 1000, 300000), 2000);
  CAF_CHECK_EQUAL(retry_delay_ms(4, 1000, 300000), 8000);
  CAF_CHECK_EQUAL(retry_delay_ms(40, 1000, 300000), 300000);
}

CAF_TEST(events map to the notice events routes match on) {
  event e;
  e.kind = "approval.requested";
  e.data = R"({"approval":"apr_1","kind":"in_doubt"})";
  CAF_CHECK_EQUAL(notice_event(e).value_or("-"), "approval.in_doubt");
  e.data = R"({"approval":"apr_1","kind":"action"})";
  CAF_CHECK_EQUAL(notice_event(e).value_or("-"), "approval.requested");
  e.kind = "work.transition";
  e.data = R"({"input":"resolve","from":"mitigating","to":"resolved"})";
  CAF_CHECK_EQUAL(notice_event(e).value_or("-"), "work.resolved");
  e.data = R"({"input":"reopen","from":"resolved","to":"open"})";
  CAF_CHECK_EQUAL(notice_event(e).value_or("-"), "work.reopened");
  e.data = R"({"input":"ack","from":"open","to":"acknowledged"})";
  CAF_CHECK(!notice_event(e));
  e.kind = "work.created";
  CAF_CHECK_EQUAL(notice_event(e).value_or("-"), "work.opened");
  e.kind = "step.intent";
  CAF_CHECK(!notice_event(e));
}

CAF_TEST(an approval notice says what why risk and who may decide) {
  event e;
  e.id = "evt_9";
  e.seq = 9;
  e.run_id = "run_7";
  e.kind = "approval.requested";
  e.data = R"({"approval":"apr_3","kind":"action","tool":"service.restart"})";
  subject_facts s;
  s.title = "checkout is failing";
  s.tool = "service.restart";
  s.args = R"({"service":"checkout"})";
  s.rule = "restarts-need-approval";
  s.reason = "restarts in prod need a human";
  s.risk = "high";
  s.roles = {"approver"};
  s.requester = "alice";
  auto n = make_notice(e, "approval.requested", s, "http://node:8080");
  CAF_REQUIRE(n);
  CAF_CHECK_EQUAL(n->approval, "apr_3");
  CAF_CHECK_EQUAL(n->risk, "high");
  CAF_CHECK(n->what.find("service.restart") != std::string::npos);
  CAF_CHECK(n->why.find("restarts-need-approval") != std::string::npos);
  CAF_CHECK(n->who.find("approver") != std::string::npos);
  CAF_CHECK(n->who.find("not alice") != std::string::npos);
  CAF_CHECK_EQUAL(n->link, "http://node:8080/v1/runs/run_7");
  auto back = notice_from_json(to_json(*n));
  CAF_REQUIRE(back);
  CAF_CHECK_EQUAL(back->what, n->what);
  CAF_CHECK_EQUAL(back->roles, n->roles);
  e.data = "not json";
  CAF_CHECK(!make_notice(e, "approval.requested", s, "http://node:8080"));
}

CAF_TEST(a webhook body is signed with the receiver secret) {
  receiver r;
  r.name = "oncall";
  r.secret = "s3cret";
  auto m = render(r, make("approval.requested"), "evt_01.oncall", 0);
  CAF_CHECK_EQUAL(m.headers["X-Sreh-Signature"], "sha256=" + hmac_sha256_hex("s3cret", m.body));
  CAF_CHECK_EQUAL(m.headers["X-Sreh-Delivery"], "evt_01.oncall");
  auto d = json::parse_object(m.body);
  CAF_REQUIRE(d);
  CAF_CHECK_EQUAL(json::string_or(*d, "delivery"), "evt_01.oncall");
  CAF_CHECK(m.body.find("s3cret") == std::string::npos);
  r.secret.clear();
  CAF_CHECK(!render(r, make("run.failed"), "x", 0).headers.contains("X-Sreh-Signature"));
}

CAF_TEST(a pagerduty event triggers per approval and resolves a resolved Work) {
  receiver r;
  r.kind = receiver_kind::pagerduty;
  r.routing_key = "key123";
  auto n = make("approval.requested");
  n.approval = "apr_5";
  auto d = json::parse_object(render(r, n, "evt_01.pd", 0).body);
  CAF_REQUIRE(d);
  CAF_CHECK_EQUAL(json::string_or(*d, "event_action"), "trigger");
  CAF_CHECK_EQUAL(json::string_or(*d, "dedup_key"), "sreh/apr_5");
  CAF_CHECK_EQUAL(json::string_or(*d, "routing_key"), "key123");
  const auto* payload = json::member(*d, "payload");
  CAF_REQUIRE(payload != nullptr);
  CAF_CHECK_EQUAL(json::string_or(*payload, "severity"), "warning");
  auto w = make("work.resolved");
  w.subject = "wrk_2";
  auto dr = json::parse_object(render(r, w, "evt_02.pd", 0).body);
  CAF_REQUIRE(dr);
  CAF_CHECK_EQUAL(json::string_or(*dr, "event_action"), "resolve");
  CAF_CHECK_EQUAL(json::string_or(*dr, "dedup_key"), "sreh/wrk_2");
  CAF_CHECK(json::member(*dr, "payload") == nullptr);
}

CAF_TEST(an email keeps a title with line breaks on its subject line) {
  receiver r;
  r.kind = receiver_kind::email;
  r.from = "sreh@example";
  r.to = {"oncall@example", "b@example"};
  auto n = make("run.failed");
  n.title = "evil\r\nBcc: victim@example";
  auto m = render(r, n, "evt_01.mail", 1'700'000'000'000'000);
  CAF_CHECK(m.body.find("Subject: [sreh] evil  Bcc: victim@example\r\n") != std::string::npos);
  CAF_CHECK(m.body.find("\r\nBcc:") == std::string::npos);
  CAF_CHECK(m.body.find("To: oncall@example, b@example\r\n") != std::string::npos);
  CAF_CHECK(m.body.find("Message-ID: <evt_01.mail@sreh>") != std::string::npos);
}
