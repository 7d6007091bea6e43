#define CAF_SUITE world_entity
#include <caf/test/unit_test.hpp>

#include <cmath>
#include <string>

#include "core/world/entity.hpp"

using namespace sreh;
using namespace sreh::world;

namespace {

entity service(std::string id, std::int64_t version, double error_rate) {
  entity e;
  e.id = std::move(id);
  e.kind = "service";
  e.version = version;
  e.metrics = {{"error_rate", error_rate}};
  e.props = {{"tier", "1"}};
  e.depends_on = {"redis", "db-main"};
  e.source = change_source::sync;
  e.changed_by = "first-sync";
  e.observed_at = 100;
  e.updated_at = 1'000;
  return e;
}

} // namespace

CAF_TEST(change sources parse by name) {
  for (auto s : {change_source::sync, change_source::action, change_source::observation})
    CAF_CHECK(parse_change_source(to_string(s)) == s);
  CAF_CHECK(!parse_change_source("guess").has_value());
}

CAF_TEST(same observation compares kind metrics props and edges but not attribution) {
  auto a = service("checkout", 3, 0.01);
  auto b = a;
  b.version = 9;
  b.source = change_source::action;
  b.changed_by = "run_x/2";
  b.observed_at = 5;
  b.updated_at = 6;
  b.depends_on = {"db-main", "redis"}; // another order, the same edges
  CAF_CHECK(same_observation(a, b));
  b.metrics["error_rate"] = 0.02;
  CAF_CHECK(!same_observation(a, b));
  b = a;
  b.props["tier"] = "2";
  CAF_CHECK(!same_observation(a, b));
  b = a;
  b.kind = "database";
  CAF_CHECK(!same_observation(a, b));
  b = a;
  b.depends_on.push_back("queue");
  CAF_CHECK(!same_observation(a, b));
}

CAF_TEST(changes bump versions of what differs or is new and keep the rest) {
  const std::vector<entity> current = {service("checkout", 3, 0.01), service("search", 1, 0.5)};
  auto seen_checkout = service("checkout", 0, 0.20); // the source knows no versions
  seen_checkout.observed_at = 777;
  auto seen_search = service("search", 0, 0.5); // unchanged
  auto seen_new = service("cart", 0, 0.0);
  seen_new.depends_on = {"redis", "checkout", "redis"};
  const auto out = changes(current, {seen_search, seen_new, seen_checkout},
                           change_source::observation, "sandbox", 5'000);
  CAF_REQUIRE_EQUAL(out.size(), 2u);
  CAF_CHECK_EQUAL(out[0].id, "cart"); // by id
  CAF_CHECK_EQUAL(out[0].version, 1);
  CAF_CHECK_EQUAL(out[0].depends_on, (std::vector<std::string>{"checkout", "redis"}));
  CAF_CHECK_EQUAL(out[1].id, "checkout");
  CAF_CHECK_EQUAL(out[1].version, 4);
  CAF_CHECK_EQUAL(out[1].metrics.at("error_rate"), 0.20);
  CAF_CHECK_EQUAL(out[1].depends_on, (std::vector<std::string>{"db-main", "redis"}));
  for (const auto& e : out) {
    CAF_CHECK_EQUAL(std::string{to_string(e.source)}, "observation");
    CAF_CHECK_EQUAL(e.changed_by, "sandbox");
    CAF_CHECK_EQUAL(e.updated_at, 5'000);
  }
  CAF_CHECK_EQUAL(out[1].observed_at, 777);
  CAF_CHECK(changes(current, {}, change_source::sync, "s", 1).empty());
  CAF_CHECK(changes(current, current, change_source::sync, "s", 1).empty());
}

CAF_TEST(metric names the entity or the metric it lacks) {
  const std::vector<entity> graph = {service("checkout", 1, 0.25)};
  auto v = metric(graph, "checkout", "error_rate");
  CAF_REQUIRE(v.has_value());
  CAF_CHECK_EQUAL(*v, 0.25);
  auto no_entity = metric(graph, "cart", "error_rate");
  CAF_REQUIRE(!no_entity.has_value());
  CAF_CHECK_EQUAL(to_string(no_entity.error().code), to_string(errc::not_found));
  CAF_CHECK(no_entity.error().message.find("entity 'cart'") != std::string::npos);
  auto no_metric = metric(graph, "checkout", "latency_p99_ms");
  CAF_REQUIRE(!no_metric.has_value());
  CAF_CHECK_EQUAL(to_string(no_metric.error().code), to_string(errc::not_found));
  CAF_CHECK(no_metric.error().message.find("metric 'latency_p99_ms' of entity 'checkout'") !=
            std::string::npos);
}

CAF_TEST(attrs round trip metrics and props exactly) {
  entity e;
  e.metrics = {{"a", 0.1 + 0.2},           {"b", 1e-300}, {"c", -0.0},
               {"d", 123456789.123456789}, {"e", 3.0},    {"nan", std::nan("")}};
  e.props = {{"version", "v2 \"rc\" ✓"}, {"empty", ""}};
  entity back;
  CAF_REQUIRE_EQUAL(read_attrs(attrs_json(e), back).message, "");
  CAF_CHECK(back.props == e.props);
  CAF_REQUIRE_EQUAL(back.metrics.size(), e.metrics.size());
  for (const auto& [k, v] : e.metrics) {
    if (std::isnan(v))
      CAF_CHECK(std::isnan(back.metrics.at(k)));
    else
      CAF_CHECK_EQUAL(back.metrics.at(k), v);
  }
  entity empty;
  CAF_CHECK_EQUAL(attrs_json(empty), R"({"metrics":{},"props":{}})");
  CAF_CHECK_EQUAL(read_attrs(R"({"metrics":{}})", back).message, "");
  CAF_CHECK(back.metrics.empty() && back.props.empty());
}

CAF_TEST(attrs of another shape are internal errors) {
  entity e;
  for (const char* bad : {"[]", R"({"metrics":[]})", R"({"metrics":{"a":"x"}})",
                          R"({"props":{"a":1}})", R"({"other":{}})", "not json"}) {
    auto err = read_attrs(bad, e);
    CAF_CHECK_EQUAL(to_string(err.code), to_string(errc::internal));
  }
}
