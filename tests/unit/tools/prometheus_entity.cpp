// prometheus.query {"entity", "kind"} (plugins/sre/prometheus/entity.hpp): the pure parts —
// how an entity's name goes into PromQL, the capability the mapping declares, and the
// observation a description reads back as. The queries themselves run against a real
// Prometheus in tests/e2e/test_prometheus.py.
#define CAF_SUITE prometheus_entity
#include <caf/test/unit_test.hpp>

#include "plugins/sre/prometheus/entity.hpp"

using namespace sreh;
using namespace sreh::plugins::prometheus;

CAF_TEST(the entity goes into every place of the query as a promql string) {
  CAF_CHECK_EQUAL(expand_entity(R"(a{s="$entity"} / b{s="$entity"})", "checkout"),
                  R"(a{s="checkout"} / b{s="checkout"})");
  // Quotes and backslashes cannot end the string literal early.
  CAF_CHECK_EQUAL(expand_entity(R"(a{s="$entity"})", R"(x"} or vector(1) or a{s="\)"),
                  R"(a{s="x\"} or vector(1) or a{s=\"\\"})");
  CAF_CHECK_EQUAL(expand_entity("up", "x"), "up");
}

CAF_TEST(the mapping declares describe for the kinds it names) {
  settings c;
  CAF_CHECK(!entity_capability(c).has_value());
  c.entities["service"].metrics["error_rate"] = {R"(e{s="$entity"})", ""};
  c.entities["service"].fields["replicas"] = R"(r{s="$entity"})";
  c.entities["host"].metrics["disk_used"] = {R"(d{h="$entity"})", ""};
  auto cap = entity_capability(c);
  CAF_REQUIRE(cap.has_value());
  CAF_CHECK(cap->kind == obs::capability_kind::describe);
  CAF_CHECK_EQUAL(cap->entity_kinds, (std::vector<std::string>{"host", "service"}));
  CAF_CHECK(cap->covers("host") && !cap->covers("job"));
  CAF_CHECK_EQUAL(cap->argument(obs::role::entity).value_or(""), "entity");
  CAF_CHECK_EQUAL(cap->argument(obs::role::kind).value_or(""), "kind");
  CAF_CHECK_EQUAL(max_entity_queries(c), 3u); // service: a metric, its baseline, a field
}

CAF_TEST(a description reads back as a metric sample) {
  auto seen = observe_entity(
    R"({"entity":"checkout","kind":"service","current":{"error_rate":0.2,"rps":110},)"
    R"("baseline":{"error_rate":0.002},"fields":{"replicas":3},"queries":{},"missing":[],)"
    R"("notes":[]})");
  CAF_REQUIRE_EQUAL(seen.size(), 1u);
  const auto* s = std::get_if<obs::metric_sample>(&seen[0]);
  CAF_REQUIRE(s != nullptr);
  CAF_CHECK_EQUAL(s->entity.name, "checkout");
  CAF_CHECK_EQUAL(s->entity.kind, "service");
  CAF_CHECK_EQUAL(s->current.at("error_rate"), 0.2);
  CAF_CHECK_EQUAL(s->current.at("rps"), 110);
  CAF_CHECK_EQUAL(s->baseline.at("error_rate"), 0.002);
  CAF_CHECK_EQUAL(s->fields.at("replicas"), 3);
  // A plain query's result (no entity) observes nothing.
  CAF_CHECK(observe_entity(R"({"query":"up","resultType":"vector","result":[]})").empty());
  CAF_CHECK(observe_entity("not json").empty());
}
