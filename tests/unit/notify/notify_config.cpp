#define CAF_SUITE notify_config
#include <caf/test/unit_test.hpp>

#include <cstdlib>
#include <string>

#include "app/serve/plugins.hpp"
#include "config/node/node_config.hpp"
#include "config/node/sections.hpp"
#include "core/notify/settings.hpp"
#include "net/client/smtp_client.hpp"

using namespace sreh;

namespace {

expected<config::node_config> load(const std::string& text) {
  static const auto regs = app::registries();
  return config::load_string(text, "cfg.yaml", {}, &regs.kinds, &regs.sections);
}

std::string err(const std::string& text) {
  auto r = load(text);
  return r ? std::string{"(loaded)"} : r.error().message;
}

} // namespace

CAF_TEST(the notify section reads receivers and nested routes) {
  ::setenv("SREH_TEST_HOOK_SECRET", "from-env", 1);
  auto cfg = load(R"(notify:
  link_base: http://sreh.example:8080/
  max_attempts: 3
  receivers:
    - {name: oncall, webhook: {url: 'https://hooks.example/sreh', secret: '${SREH_TEST_HOOK_SECRET}'}}
    - {name: pager, pagerduty: {url: 'http://127.0.0.1:9/v2/enqueue', routing_key: abc}}
    - {name: mail, email: {smtp: 'mail.example', from: 'sreh@example', to: [a@example]}}
  routes:
    - match: {team: payments}
      receiver: oncall
      group_by: [event]
      repeat_interval: 1h
      routes:
        - {match: {severity: page}, receiver: pager, continue: true}
    - {match_re: {event: 'approval\..*'}, receiver: mail}
)");
  CAF_REQUIRE(cfg);
  const auto& s = cfg->section<notify::settings>();
  CAF_REQUIRE_EQUAL(s.receivers.size(), 3u);
  CAF_CHECK_EQUAL(s.receivers[0].secret, "from-env");
  CAF_CHECK(s.receivers[1].kind == notify::receiver_kind::pagerduty);
  CAF_CHECK_EQUAL(s.receivers[2].smtp_port, 587);
  CAF_CHECK_EQUAL(s.receivers[2].starttls, "required");
  CAF_CHECK_EQUAL(s.link_base, "http://sreh.example:8080");
  CAF_CHECK_EQUAL(s.max_attempts, 3);
  CAF_REQUIRE_EQUAL(s.routes.size(), 2u);
  CAF_CHECK_EQUAL(s.routes[0].repeat_interval_s, 3600);
  CAF_REQUIRE_EQUAL(s.routes[0].routes.size(), 1u);
  CAF_CHECK(s.routes[0].routes[0].continue_);
  CAF_CHECK(s.enabled());
}

CAF_TEST(bad notify sections are refused naming the field) {
  CAF_CHECK_EQUAL(err("notify:\n  receivers:\n    - {name: a, webhook: {url: 'ftp://x'}}\n"),
                  "cfg.yaml:3:32: notify.receivers[0].webhook.url: expected an http:// or "
                  "https:// URL");
  CAF_CHECK_EQUAL(err("notify:\n  receivers:\n    - {name: a, webhook: {url: 'http://x'}}\n"
                      "  routes:\n    - {receiver: b}\n"),
                  "cfg.yaml:5:18: notify.routes[0].receiver: no receiver 'b' in notify.receivers");
  CAF_CHECK(err("notify:\n  receivers:\n    - {name: p, pagerduty: {url: 'http://x'}}\n")
              .find("routing_key") != std::string::npos);
  CAF_CHECK(err("notify:\n  receivers:\n    - {name: a, webhook: {url: 'http://x'}}\n"
                "    - {name: a, slack: {url: 'http://y'}}\n")
              .find("a second receiver named 'a'") != std::string::npos);
  CAF_CHECK(err("notify:\n  routes:\n    - {match_re: {event: '('}, receiver: a}\n")
              .find("not a regular expression") != std::string::npos);
  CAF_CHECK(err("notify:\n  receivers:\n    - {name: a, webhook: {url: 'http://x', secret: "
                "'${SREH_TEST_UNSET_VAR}'}}\n")
              .find("SREH_TEST_UNSET_VAR") != std::string::npos);
}

CAF_TEST(smtp data is dot stuffed with CRLF line ends) {
  CAF_CHECK_EQUAL(net::smtp_dot_stuff("a\n.b\r\n..c"), "a\r\n..b\r\n...c\r\n");
  CAF_CHECK_EQUAL(net::smtp_dot_stuff(".\r\n"), "..\r\n");
  CAF_CHECK_EQUAL(net::smtp_address("Sreh Bot <sreh@example>"), "sreh@example");
  CAF_CHECK_EQUAL(net::smtp_address("sreh@example"), "sreh@example");
}
