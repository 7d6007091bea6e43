#define CAF_SUITE core_metrics
#include <caf/test/unit_test.hpp>

#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/base/metrics.hpp"

using namespace sreh::metrics;

namespace {

/// True when `f` throws std::invalid_argument.
template <class F>
bool refused(F f) {
  try {
    f();
  } catch (const std::invalid_argument&) {
    return true;
  }
  return false;
}

} // namespace

CAF_TEST(counters and gauges are exposed with help and type and escaped labels) {
  registry r;
  auto& reqs =
    r.counter("sreh_http_requests_total", "HTTP requests.\nBy route.", {"route", "code"});
  reqs.with({"/v1/runs", "200"}).inc(3);
  reqs.with({"/v1/\"x\"\\", "404"}).inc();
  r.gauge("sreh_sse_clients", "Open SSE streams.").with({}).set(2.5);
  CAF_CHECK_EQUAL(r.expose(),
                  "# HELP sreh_http_requests_total HTTP requests.\\nBy route.\n"
                  "# TYPE sreh_http_requests_total counter\n"
                  "sreh_http_requests_total{route=\"/v1/\\\"x\\\"\\\\\",code=\"404\"} 1\n"
                  "sreh_http_requests_total{route=\"/v1/runs\",code=\"200\"} 3\n"
                  "# HELP sreh_sse_clients Open SSE streams.\n"
                  "# TYPE sreh_sse_clients gauge\n"
                  "sreh_sse_clients 2.5\n");
}

CAF_TEST(a histogram has cumulative buckets up to Inf with its sum and count) {
  registry r;
  auto& h = r.histogram("sreh_step_seconds", "Step latency.", {"kind"}, {0.1, 1});
  auto& tool = h.with({"tool"});
  for (double x : {0.05, 0.1, 0.5, 3.0})
    tool.observe(x);
  CAF_CHECK_EQUAL(r.expose(), "# HELP sreh_step_seconds Step latency.\n"
                              "# TYPE sreh_step_seconds histogram\n"
                              "sreh_step_seconds_bucket{kind=\"tool\",le=\"0.1\"} 2\n"
                              "sreh_step_seconds_bucket{kind=\"tool\",le=\"1\"} 3\n"
                              "sreh_step_seconds_bucket{kind=\"tool\",le=\"+Inf\"} 4\n"
                              "sreh_step_seconds_sum{kind=\"tool\"} 3.65\n"
                              "sreh_step_seconds_count{kind=\"tool\"} 4\n");
}

CAF_TEST(collectors report at scrape time and families are sorted by name) {
  registry r;
  r.counter("sreh_z_total", "Z.").with({}).inc();
  int scrapes = 0;
  auto id = r.add_collector([&scrapes] {
    ++scrapes;
    return std::vector<collected>{{"sreh_runs",
                                   "Runs by state.",
                                   kind::gauge,
                                   {{{{"state", "running"}}, 4}, {{{"state", "waiting"}}, 1}}}};
  });
  auto text = r.expose();
  CAF_CHECK_EQUAL(scrapes, 1);
  CAF_CHECK(text.find("sreh_runs{state=\"running\"} 4\nsreh_runs{state=\"waiting\"} 1\n") !=
            std::string::npos);
  CAF_CHECK(text.find("sreh_runs") < text.find("sreh_z_total"));
  r.remove_collector(id);
  CAF_CHECK(r.expose().find("sreh_runs") == std::string::npos);
}

CAF_TEST(bad names and a second type for one name are refused) {
  registry r;
  CAF_CHECK(refused([&] { (void)r.counter("2xx_total", "x"); }));
  CAF_CHECK(refused([&] { (void)r.counter("sreh_ok_total", "x", {"__reserved"}); }));
  CAF_CHECK(refused([&] { (void)r.histogram("sreh_h", "x", {"le"}); }));
  r.counter("sreh_once_total", "x");
  CAF_CHECK(refused([&] { (void)r.gauge("sreh_once_total", "x"); }));
  CAF_CHECK(valid_metric_name("sreh:rate5m"));
  CAF_CHECK(!valid_label_name("a:b"));
}

CAF_TEST(concurrent increments are all counted) {
  registry r;
  auto& c = r.counter("sreh_n_total", "n").with({});
  auto& h = r.histogram("sreh_t_seconds", "t").with({});
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; ++t)
    ts.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) {
        c.inc();
        h.observe(0.001);
      }
    });
  for (auto& t : ts)
    t.join();
  CAF_CHECK_EQUAL(c.value(), 40000u);
  CAF_CHECK_EQUAL(h.read().count, 40000u);
}
