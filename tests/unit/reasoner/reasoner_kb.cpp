#define CAF_SUITE reasoner_kb
#include <cstdio>
#include <fstream>
#include <set>
#include <string>

#include "plugins/models/builtin/knowledge_base.hpp"
#include "plugins/models/builtin/reasoner.hpp"
#include "tests/support/caf_test.hpp"

using namespace sreh;
using namespace sreh::plugins::reasoner;

namespace {

std::string kb_error(const std::string& text) {
  auto kb = parse_knowledge_base(text, "kb.yaml");
  return kb ? std::string{"(parsed)"} : kb.error().message;
}

const char* minimal_mode = R"(
failure_modes:
  - kind: k1
    applies_to: [service]
    symptoms:
      - {id: s1, when: "error_rate > 2x baseline", weight: 2}
    remedies:
      - {name: r, actions: [{tool: service.restart, args: {service: $target}}]}
)";

std::string with_anomalies(const std::string& modes) {
  return "anomalies:\n  - {class: errors, when: \"error_rate > 0.1\"}\n" + modes;
}

} // namespace

CAF_TEST(the embedded knowledge base loads and covers every fault kind) {
  auto kb = embedded_knowledge_base();
  CAF_REQUIRE(kb.has_value());
  std::set<std::string> kinds;
  for (auto& m : kb->modes) {
    kinds.insert(m.kind);
    CAF_CHECK(!m.symptoms.empty());
    CAF_CHECK(!m.remedies.empty());
    for (auto& r : m.remedies)
      CAF_CHECK(!r.actions.empty());
  }
  CAF_CHECK_EQUAL(kinds,
                  (std::set<std::string>{"bad_deploy", "memory_leak", "connection_pool_exhaustion",
                                         "dependency_slowdown", "traffic_spike", "disk_full",
                                         "cert_expired", "bad_flag", "gpu_xid"}));
  CAF_CHECK(kb->is_remedy_tool("deploy.rollback"));
  CAF_CHECK(!kb->is_remedy_tool("service.describe"));
  CAF_CHECK_EQUAL(kb->find("bad_flag")->target, std::string{"$flag"});
  CAF_CHECK(!kb->anomalies.empty());
  CAF_CHECK(kb->limits.conclude_score > 0);
}

CAF_TEST(the remedies only use the mutating sandbox tools) {
  std::set<std::string> mutating{
    "deploy.rollback", "service.restart", "service.scale", "db.set_pool_limit", "host.cleanup_disk",
    "cert.rotate",     "flag.set",        "host.cordon",   "host.drain",        "job.restart"};
  auto kb = embedded_knowledge_base();
  CAF_REQUIRE(kb.has_value());
  for (auto& m : kb->modes)
    for (auto& r : m.remedies)
      for (auto& a : r.actions)
        CAF_CHECK(mutating.contains(a.tool));
}

CAF_TEST(conditions parse) {
  auto c = parse_condition("error_rate > 5x baseline and error_rate > 0.01");
  CAF_REQUIRE(c.has_value());
  CAF_REQUIRE_EQUAL(c->all.size(), 2u);
  CAF_CHECK_EQUAL(c->all[0].metric, std::string{"error_rate"});
  CAF_CHECK_EQUAL(c->all[0].factor, 5.0);
  CAF_CHECK_EQUAL(c->all[0].ref, std::string{"baseline"});
  CAF_CHECK_EQUAL(c->all[1].constant, 0.01);
  auto f = parse_condition("connections >= max_connections");
  CAF_REQUIRE(f.has_value());
  CAF_CHECK_EQUAL(f->all[0].ref, std::string{"max_connections"});
  CAF_CHECK(!parse_condition("error_rate >> 2").has_value());
  CAF_CHECK(!parse_condition("error_rate > 5x").has_value());
  CAF_CHECK(!parse_condition("error_rate > 1 or cpu > 2").has_value());
  CAF_CHECK(!parse_condition("").has_value());
}

CAF_TEST(a minimal knowledge base parses) {
  auto kb = parse_knowledge_base(with_anomalies(minimal_mode), "kb.yaml");
  CAF_REQUIRE(kb.has_value());
  CAF_CHECK_EQUAL(kb->modes.size(), 1u);
  CAF_CHECK_EQUAL(kb->modes[0].remedies[0].actions[0].args,
                  std::string{R"({"service":"$target"})"});
  CAF_CHECK_EQUAL(kb->source, std::string{"kb.yaml"});
}

CAF_TEST(errors name the file line and field) {
  CAF_CHECK_EQUAL(kb_error(with_anomalies(R"(
failure_modes:
  - kind: k1
    applies_to: [service]
    symptoms:
      - {id: s1, when: "error_rate >> 2", weight: 2}
)")),
                  std::string{"kb.yaml:8:24: failure_modes[0].symptoms[0].when: condition "
                              "'error_rate >> 2': unknown operator '>>' (use > >= < <= == !=)"});
  CAF_CHECK_EQUAL(kb_error(with_anomalies(R"(
failure_modes:
  - kind: k1
    applies_to: [service]
    symptoms:
      - {id: s1, log: "unbalanced (", weight: 2}
)"))
                    .substr(0, 48),
                  std::string{"kb.yaml:8:23: failure_modes[0].symptoms[0].log: "});
  CAF_CHECK_EQUAL(kb_error(with_anomalies(R"(
failure_modes:
  - kind: k1
    applies_to: [service]
    symptoms:
      - {id: s1, when: "cpu > 1", weight: 2, wieght: 3}
)")),
                  std::string{"kb.yaml:8:46: failure_modes[0].symptoms[0]: unknown key 'wieght'"});
  CAF_CHECK_EQUAL(
    kb_error(with_anomalies(R"(
failure_modes:
  - kind: k1
    applies_to: [service]
    symptoms:
      - {id: s1, when: "cpu > 1"}
)")),
    std::string{"kb.yaml:8:9: failure_modes[0].symptoms[0].weight: missing (expected a number)"});
  CAF_CHECK_EQUAL(kb_error(with_anomalies(R"(
failure_modes:
  - kind: k1
    applies_to: [service]
    target: $nothing
    symptoms:
      - {id: s1, when: "cpu > 1", weight: 1}
)")),
                  std::string{"kb.yaml:7:13: failure_modes[0].target: expected $subject or "
                              "$<binding> of one of the symptoms"});
  CAF_CHECK_EQUAL(kb_error(with_anomalies(R"(
failure_modes:
  - kind: k1
    applies_to: [planet]
    symptoms: []
)")),
                  std::string{"kb.yaml:6:18: failure_modes[0].applies_to[0]: expected service, "
                              "database, cache, queue, host or job"});
  CAF_CHECK_EQUAL(kb_error(with_anomalies(std::string{minimal_mode} + R"(
  - kind: k1
    applies_to: [service]
    symptoms: []
)")),
                  std::string{"kb.yaml:12:11: failure_modes[1].kind: duplicate kind 'k1'"});
  CAF_CHECK_EQUAL(kb_error("failure_modes: [\n"),
                  std::string{"kb.yaml:2:1: end of sequence flow not found"});
  CAF_CHECK_EQUAL(kb_error("anomalies: []\nfailure_modes: []\n"),
                  std::string{"kb.yaml:2:16: failure_modes: at least one failure mode is needed"});
}

CAF_TEST(a remedy must refer to known symptoms and bindings) {
  auto e = kb_error(with_anomalies(R"(
failure_modes:
  - kind: k1
    applies_to: [service]
    symptoms:
      - {id: s1, when: "cpu > 1", weight: 1}
    remedies:
      - {name: r, when: s9, actions: [{tool: service.restart}]}
)"));
  CAF_CHECK_EQUAL(e,
                  std::string{"kb.yaml:10:25: failure_modes[0].remedies[0].when: no symptom 's9'"});
}

CAF_TEST(a file overrides the embedded knowledge base) {
  auto missing = load_knowledge_base("/nonexistent/kb.yaml");
  CAF_REQUIRE(!missing.has_value());
  CAF_CHECK_EQUAL(missing.error().code, errc::not_found);
  CAF_CHECK(!sreh::plugins::make_builtin_reasoner("/nonexistent/kb.yaml").has_value());
  auto path = std::string{"/tmp/sreh_reasoner_kb_test.yaml"};
  {
    std::ofstream out(path);
    out << with_anomalies(minimal_mode);
  }
  auto kb = load_knowledge_base(path);
  CAF_REQUIRE(kb.has_value());
  CAF_CHECK_EQUAL(kb->source, path);
  auto p = sreh::plugins::make_builtin_reasoner(path);
  CAF_REQUIRE(p.has_value());
  CAF_CHECK_EQUAL((*p)->name(), std::string{"builtin"});
  CAF_CHECK((*p)->deterministic());
  std::remove(path.c_str());
  CAF_CHECK(sreh::plugins::make_builtin_reasoner("").has_value());
}

CAF_TEST(goal cues name failure modes by whole words and the most specific phrase first) {
  auto kb = embedded_knowledge_base();
  CAF_REQUIRE(kb.has_value());
  auto kinds = [&](const std::string& goal) {
    std::vector<std::string> out;
    for (auto& c : kb->cues_in(goal))
      out.push_back(c.mode->kind);
    return out;
  };
  auto cfg = kinds("frontend errors after a Config Change; find the cause");
  CAF_REQUIRE(!cfg.empty());
  CAF_CHECK_EQUAL(cfg.front(), "bad_flag");
  auto rel = kinds("errors since the release was deployed");
  CAF_REQUIRE(!rel.empty());
  CAF_CHECK_EQUAL(rel.front(), "bad_deploy");
  auto tls = kinds("TLS errors on checkout");
  CAF_CHECK_EQUAL(tls, std::vector<std::string>{"cert_expired"});
  auto gpu = kinds("a GPU job stalled");
  CAF_CHECK_EQUAL(gpu, std::vector<std::string>{"gpu_xid"});
  // Names are not cue words: "feature-store" is a service, not a feature flag.
  CAF_CHECK(kinds("feature-store errors; find the cause").empty());
  CAF_CHECK(kinds("frontend errors are high; find every cause and mitigate").empty());
  // Cues are validated like the rest of the file.
  CAF_CHECK(kb_error(with_anomalies(R"(
failure_modes:
  - kind: k1
    applies_to: [service]
    cues: [""]
    symptoms:
      - {id: s1, when: "error_rate > 2x baseline", weight: 2}
)"))
              .find("an empty cue") != std::string::npos);
}
