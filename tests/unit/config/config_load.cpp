#define CAF_SUITE config_load
#include <caf/test/unit_test.hpp>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "app/serve/plugins.hpp"
#include "config/node/node_config.hpp"
#include "plugins/sre/prometheus/settings.hpp"

using namespace sreh;
using namespace sreh::config;

namespace {

/// The registries of this build: the config sections its plugins read.
const app::node_registries& regs() {
  static const auto r = app::registries();
  return r;
}

/// `text` loaded as `name` with the plugins' sections, as `sreh serve` loads it.
expected<node_config> load_with_plugins(const std::string& text, const std::string& name) {
  return load_string(text, name, {}, &regs().kinds, &regs().sections);
}

/// The error of loading `yaml` as "cfg.yaml", or "(ok)".
std::string err(const std::string& yaml) {
  auto r = load_with_plugins(yaml, "cfg.yaml");
  if (r)
    return "(ok)";
  if (r.error().code != errc::invalid_argument)
    return "(wrong code) " + r.error().message;
  return r.error().message;
}

} // namespace

CAF_TEST(empty text gives all defaults) {
  for (const char* text : {"", "\n", "# only a comment\n"}) {
    auto r = load_string(text, "cfg.yaml");
    CAF_CHECK(r.has_value());
    if (!r)
      continue;
    CAF_CHECK_EQUAL(r->node_id, std::string{"node-1"});
    CAF_CHECK_EQUAL(r->listen, std::string{"127.0.0.1:7070"});
    CAF_CHECK_EQUAL(r->store.kind, std::string{"sqlite"});
    CAF_CHECK_EQUAL(r->store.path, std::string{"./data/sreh.db"});
    CAF_CHECK_EQUAL(r->limits.max_json_depth, 32);
    CAF_CHECK_EQUAL(r->budget.max_steps, 50);
    CAF_CHECK_EQUAL(r->model.provider, std::string{"builtin"});
    CAF_CHECK_EQUAL(r->source, std::string{"cfg.yaml"});
  }
}

CAF_TEST(full file) {
  auto r = load_string(R"(
node_id: node-7
listen: "[::1]:8080"
data_dir: /var/lib/sreh/
policy_mode: autonomous
store: {kind: sqlite, synchronous: full}
logging:
  level: debug
  format: json
limits:
  max_body_bytes: 2048
  max_json_depth: 16
  http_threads: 4
budget:
  max_steps: 5
model:
  provider: scripted
  script:
    - tool: sandbox.metrics
      args: {service: checkout, window: 5m, n: 3, ratio: 0.5, on: true, none: ~, q: "42"}
    - tool: sandbox.restart
tools:
  record_file: /tmp/rec.txt
)",
                       "cfg.yaml");
  CAF_CHECK(r.has_value());
  if (!r) {
    CAF_MESSAGE(r.error().message);
    return;
  }
  CAF_CHECK_EQUAL(r->node_id, std::string{"node-7"});
  CAF_CHECK_EQUAL(r->listen, std::string{"[::1]:8080"});
  CAF_CHECK_EQUAL(r->store.path, std::string{"/var/lib/sreh/sreh.db"});
  CAF_CHECK_EQUAL(r->store.synchronous, std::string{"full"});
  CAF_CHECK_EQUAL(r->policy_mode, std::string{"autonomous"});
  CAF_CHECK_EQUAL(r->logging.format, std::string{"json"});
  CAF_CHECK_EQUAL(r->limits.max_body_bytes, 2048);
  CAF_CHECK_EQUAL(r->limits.max_json_depth, 16);
  CAF_CHECK_EQUAL(r->limits.http_threads, 4);
  CAF_CHECK_EQUAL(r->limits.tool_threads, 4);
  CAF_CHECK_EQUAL(r->limits.scheduler_policy, std::string{"sharing"}); // the default
  CAF_CHECK_EQUAL(r->budget.max_steps, 5);
  CAF_CHECK_EQUAL(r->budget.max_tokens, 200'000);
  CAF_CHECK_EQUAL(r->model.script.size(), 2u);
  if (r->model.script.size() == 2) {
    CAF_CHECK_EQUAL(r->model.script[0].tool, std::string{"sandbox.metrics"});
    CAF_CHECK_EQUAL(r->model.script[0].args,
                    std::string{R"({"service":"checkout","window":"5m","n":3,"ratio":0.5,)"
                                R"("on":true,"none":null,"q":"42"})"});
    CAF_CHECK_EQUAL(r->model.script[1].args, std::string{"{}"});
  }
  CAF_CHECK_EQUAL(r->tools.record_file, std::string{"/tmp/rec.txt"});
}

CAF_TEST(unknown keys with suggestions) {
  CAF_CHECK_EQUAL(err("node_id: a\nlissten: 1.2.3.4:80\n"),
                  std::string{"cfg.yaml:2:1: lissten: unknown key 'lissten' (did you mean "
                              "'listen'?)"});
  CAF_CHECK_EQUAL(err("store:\n  kind: sqlite\n  pth: x\n"),
                  std::string{"cfg.yaml:3:3: store.pth: unknown key 'pth' (did you mean 'path'?)"});
  CAF_CHECK_EQUAL(err("logging: {zzzzzz: 1}\n"),
                  std::string{"cfg.yaml:1:11: logging.zzzzzz: unknown key 'zzzzzz' (expected "
                              "one of level, format)"});
  CAF_CHECK_EQUAL(err("listen: a:1\nlisten: b:2\n"),
                  std::string{"cfg.yaml:2:1: listen: duplicate key"});
}

CAF_TEST(wrong types and ranges) {
  CAF_CHECK_EQUAL(err("limits:\n  max_connections: abc\n"),
                  std::string{"cfg.yaml:2:20: limits.max_connections: expected an integer, got "
                              "'abc'"});
  CAF_CHECK_EQUAL(err("limits:\n  http_threads: 0\n"),
                  std::string{"cfg.yaml:2:17: limits.http_threads: expected an integer between 1 "
                              "and 256, got 0"});
  CAF_CHECK_EQUAL(err("budget:\n  max_tokens: -3\n"),
                  std::string{"cfg.yaml:2:15: budget.max_tokens: expected an integer between 1 "
                              "and 9223372036854775807, got -3"});
  CAF_CHECK_EQUAL(err("limits:\n  max_body_bytes: \"12\"\n"),
                  std::string{"cfg.yaml:2:19: limits.max_body_bytes: expected an integer, got "
                              "'12'"});
  CAF_CHECK_EQUAL(err("node_id: [a, b]\n"),
                  std::string{"cfg.yaml:1:10: node_id: expected a string, got a sequence"});
  CAF_CHECK_EQUAL(err("store: sqlite\n"),
                  std::string{"cfg.yaml:1:8: store: expected a mapping, got a scalar"});
  CAF_CHECK_EQUAL(err("- a\n- b\n"),
                  std::string{"cfg.yaml:1:1: (top level): expected a mapping of settings"});
}

CAF_TEST(overload limits) {
  auto r = load_string("limits:\n  max_connections_per_client: 0\n  header_timeout_ms: 250\n"
                       "  idle_timeout_ms: 9000\n  max_commit_backlog: 7\n",
                       "cfg.yaml");
  CAF_REQUIRE(r.has_value());
  CAF_CHECK_EQUAL(r->limits.max_connections_per_client, 0);
  CAF_CHECK_EQUAL(r->limits.header_timeout_ms, 250);
  CAF_CHECK_EQUAL(r->limits.idle_timeout_ms, 9000);
  CAF_CHECK_EQUAL(r->limits.max_commit_backlog, 7);
  auto d = load_string("", "cfg.yaml");
  CAF_REQUIRE(d.has_value());
  CAF_CHECK_EQUAL(d->limits.max_connections_per_client, 256);
  CAF_CHECK_EQUAL(d->limits.header_timeout_ms, 5000);
  CAF_CHECK_EQUAL(d->limits.max_commit_backlog, 20000);
  CAF_CHECK_EQUAL(err("limits:\n  header_timeout_ms: 0\n"),
                  std::string{"cfg.yaml:2:22: limits.header_timeout_ms: expected an integer "
                              "between 1 and 3600000, got 0"});
  CAF_CHECK_EQUAL(err("limits:\n  max_connections_per_client: -1\n"),
                  std::string{"cfg.yaml:2:31: limits.max_connections_per_client: expected an "
                              "integer between 0 and 1000000, got -1"});
}

CAF_TEST(enums) {
  CAF_CHECK_EQUAL(err("store:\n  kind: mysql\n"),
                  std::string{"cfg.yaml:2:9: store.kind: expected one of sqlite, postgres, got "
                              "'mysql'"});
  CAF_CHECK_EQUAL(err("store: {synchronous: off}\n"),
                  std::string{"cfg.yaml:1:22: store.synchronous: expected one of normal, full, "
                              "got 'off'"});
  CAF_CHECK_EQUAL(err("policy_mode: yolo\n"),
                  std::string{"cfg.yaml:1:14: policy_mode: expected one of read_only, review, "
                              "autonomous, got 'yolo'"});
  CAF_CHECK(err("logging: {level: loud}\n").find("cfg.yaml:1:18: logging.level: expected one of") ==
            0);
  CAF_CHECK(
    err("logging: {format: xml}\n").find("cfg.yaml:1:19: logging.format: expected one of") == 0);
  CAF_CHECK_EQUAL(err("limits: {scheduler_policy: fifo}\n"),
                  std::string{"cfg.yaml:1:28: limits.scheduler_policy: expected one of sharing, "
                              "stealing, got 'fifo'"});
  CAF_CHECK_EQUAL(err("model: {provider: gpt}\n"),
                  std::string{"cfg.yaml:1:19: model.provider: expected one of builtin, scripted, "
                              "openai, anthropic, got 'gpt'"});
}

CAF_TEST(listen) {
  CAF_CHECK_EQUAL(err("listen: localhost\n"),
                  std::string{"cfg.yaml:1:9: listen: expected host:port, got 'localhost'"});
  CAF_CHECK_EQUAL(err("listen: \"127.0.0.1:70000\"\n"),
                  std::string{"cfg.yaml:1:9: listen: expected a port between 0 and 65535, got "
                              "'127.0.0.1:70000'"});
  CAF_CHECK_EQUAL(err("listen: \"::1:80\"\n"),
                  std::string{"cfg.yaml:1:9: listen: expected host:port (write IPv6 addresses as "
                              "[::1]:port), got '::1:80'"});
  std::string host;
  std::uint16_t port = 1;
  CAF_CHECK(!parse_listen("[::1]:0", "x", host, port));
  CAF_CHECK_EQUAL(host, std::string{"::1"});
  CAF_CHECK_EQUAL(port, 0);
  CAF_CHECK(!parse_listen("0.0.0.0:65535", "x", host, port));
  CAF_CHECK_EQUAL(port, 65535);
  CAF_CHECK_EQUAL(parse_listen(":80", "serve.listen", host, port).message,
                  std::string{"serve.listen: expected host:port with a non-empty host, got ':80'"});
  CAF_CHECK(parse_listen("h:", "x", host, port));
  CAF_CHECK(parse_listen("h:-1", "x", host, port));
  CAF_CHECK(parse_listen("[::1]80", "x", host, port));
}

CAF_TEST(syntax errors carry the mark) {
  CAF_CHECK_EQUAL(err("store:\n  kind: [sqlite\n"),
                  std::string{"cfg.yaml:3:1: invalid YAML: end of sequence flow not found"});
  CAF_CHECK(err("a: b: c\n").find("cfg.yaml:1:") == 0);
}

CAF_TEST(cross field rules) {
  CAF_CHECK_EQUAL(err("store:\n  kind: postgres\n"),
                  std::string{"cfg.yaml:2:3: store.url: required when store.kind is postgres"});
  CAF_CHECK_EQUAL(err("model:\n  provider: scripted\n"),
                  std::string{"cfg.yaml:2:3: model.script: required (at least one step) when "
                              "model.provider is scripted"});
  CAF_CHECK_EQUAL(err("model:\n  provider: scripted\n  script:\n    - args: {}\n"),
                  std::string{"cfg.yaml:4:7: model.script[0]: missing key 'tool'"});
  CAF_CHECK_EQUAL(err("model:\n  script:\n    - {tool: t, args: [1]}\n"),
                  std::string{"cfg.yaml:3:23: model.script[0].args: expected a mapping, got a "
                              "sequence"});
  node_config cfg;
  cfg.data_dir = "/srv";
  CAF_CHECK(!finalize(cfg));
  CAF_CHECK_EQUAL(cfg.store.path, std::string{"/srv/sreh.db"});
}

CAF_TEST(environment substitution) {
  ::setenv("SREH_TEST_PG_URL", "postgres://u:p@h/db", 1);
  ::unsetenv("SREH_TEST_UNSET");
  auto r = load_string("store:\n  kind: postgres\n  url: \"${SREH_TEST_PG_URL}?x=1\"\n", "c.yaml");
  CAF_CHECK(r.has_value());
  if (r)
    CAF_CHECK_EQUAL(r->store.url, std::string{"postgres://u:p@h/db?x=1"});
  CAF_CHECK_EQUAL(err("store:\n  url: ${SREH_TEST_UNSET}\n"),
                  std::string{"cfg.yaml:2:8: store.url: environment variable 'SREH_TEST_UNSET' "
                              "is not set"});
  CAF_CHECK_EQUAL(err("node_id: \"${SREH_TEST_PG_URL\"\n"),
                  std::string{"cfg.yaml:1:10: node_id: unterminated '${' (expected ${NAME})"});
}

CAF_TEST(an unset key variable is recorded on its route and fails nothing else) {
  ::unsetenv("SREH_TEST_UNSET_KEY");
  auto r = load_string("model:\n  provider: openai\n  base_url: http://127.0.0.1:8000/v1\n"
                       "  model: m\n  api_key: ${SREH_TEST_UNSET_KEY}\n",
                       "c.yaml");
  CAF_REQUIRE(r.has_value());
  CAF_CHECK_EQUAL(r->model.main.api_key, "");
  CAF_CHECK_EQUAL(r->model.main.api_key_unset,
                  "c.yaml:5:12: model.api_key: environment variable 'SREH_TEST_UNSET_KEY' is not "
                  "set");
  // Only the key is lenient: a bad ${...} in it, or an unset variable elsewhere, still fails.
  CAF_CHECK_EQUAL(
    err("model:\n  api_key: \"${SREH_TEST_UNSET_KEY\"\n"),
    std::string{"cfg.yaml:2:12: model.api_key: unterminated '${' (expected ${NAME})"});
  CAF_CHECK_EQUAL(err("store:\n  url: ${SREH_TEST_UNSET_KEY}\n"),
                  std::string{"cfg.yaml:2:8: store.url: environment variable "
                              "'SREH_TEST_UNSET_KEY' is not set"});
}

CAF_TEST(files) {
  auto missing = load_file("/nonexistent/sreh.yaml");
  CAF_CHECK(!missing.has_value());
  if (!missing)
    CAF_CHECK_EQUAL(missing.error().message,
                    std::string{"/nonexistent/sreh.yaml: cannot read: No such file or directory"});
  auto dir = load_file("/tmp");
  CAF_CHECK(!dir.has_value());
  if (!dir)
    CAF_CHECK_EQUAL(dir.error().message, std::string{"/tmp: cannot read: Is a directory"});
  std::string path = "/tmp/sreh_config_load_test_" + std::to_string(::getpid()) + ".yaml";
  {
    std::ofstream out{path};
    out << "node_id: n1\nlimits:\n  tool_threads: many\n";
  }
  auto bad = load_file(path);
  CAF_CHECK(!bad.has_value());
  if (!bad)
    CAF_CHECK_EQUAL(bad.error().message,
                    path + ":3:17: limits.tool_threads: expected an integer, got 'many'");
  {
    std::ofstream out{path};
    out << "node_id: n1\n";
  }
  auto good = load_file(path);
  CAF_CHECK(good.has_value());
  if (good) {
    CAF_CHECK_EQUAL(good->node_id, std::string{"n1"});
    CAF_CHECK_EQUAL(good->source, path);
  }
  std::remove(path.c_str());
}

CAF_TEST(empty values and nesting) {
  // An empty section is all defaults; an empty scalar is an error at the key.
  CAF_CHECK_EQUAL(err("store:\nlimits:\n"), std::string{"(ok)"});
  CAF_CHECK_EQUAL(err("node_id:\n"),
                  std::string{"cfg.yaml:1:1: node_id: expected a string, got nothing"});
  CAF_CHECK_EQUAL(err("node_id: \"\"\n"), std::string{"cfg.yaml:1:10: node_id: must not be empty"});
  std::string deep = "model:\n  script:\n    - tool: t\n      args: ";
  for (int i = 0; i < 40; ++i)
    deep += "{a: ";
  deep += "1" + std::string(40, '}') + "\n";
  CAF_CHECK(err(deep).find("nesting deeper than 32 levels") != std::string::npos);
}

CAF_TEST(test tools are off unless the config asks for them) {
  auto plain = load_string("", "cfg.yaml");
  CAF_REQUIRE(plain.has_value());
  CAF_CHECK(!plain->tools.testkit);
  auto on = load_string("tools: {testkit: true, record_file: /tmp/r.log}\n", "cfg.yaml");
  CAF_REQUIRE(on.has_value());
  CAF_CHECK(on->tools.testkit);
  CAF_CHECK_EQUAL(on->tools.record_file, std::string{"/tmp/r.log"});
  auto e = err("tools:\n  testkit: maybe\n");
  CAF_CHECK(e.find("cfg.yaml:2:12") != std::string::npos);
  CAF_CHECK(e.find("tools.testkit") != std::string::npos);
  CAF_CHECK(e.find("maybe") != std::string::npos);
}

CAF_TEST(flows are loaded from a folder relative to the config file) {
  auto demo =
    load_file(SREH_SOURCE_DIR "/examples/configs/demo.yaml", {}, &regs().kinds, &regs().sections);
  CAF_REQUIRE(demo.has_value());
  CAF_CHECK_EQUAL(demo->flows.dir, std::string{SREH_SOURCE_DIR "/examples/flows"});
  CAF_CHECK_EQUAL(demo->flows.loaded.size(), 4u);
  auto cfg = load_string("flows: " SREH_SOURCE_DIR "/examples/flows\n", "cfg.yaml");
  CAF_REQUIRE(cfg.has_value());
  CAF_CHECK_EQUAL(cfg->flows.loaded.size(), 4u);
  CAF_CHECK_EQUAL(cfg->flows.loaded[0].name, std::string{"cert-rotation"});
  auto none = load_string("flows: /nonexistent/flows\n", "cfg.yaml");
  CAF_REQUIRE(!none.has_value());
  CAF_CHECK_EQUAL(none.error().message, std::string{"cfg.yaml:1:8: flows: cannot read "
                                                    "'/nonexistent/flows': No such file or "
                                                    "directory"});
  std::string dir = "/tmp/sreh_config_flows_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  std::ofstream{dir + "/a.yaml"} << "flow: a\nsteps:\n  - {id: w, wait: soon}\n";
  auto bad = load_string("flows: " + dir + "\n", "cfg.yaml");
  CAF_REQUIRE(!bad.has_value());
  CAF_CHECK_EQUAL(bad.error().message,
                  "cfg.yaml: " + dir +
                    "/a.yaml:3:19: steps[0].wait: expected a duration like 30s, 15m, 1h or 2d, "
                    "got 'soon'");
  std::filesystem::remove_all(dir);
}

CAF_TEST(prometheus entities map reasoner metrics to promql) {
  auto cfg =
    load_with_plugins("prometheus:\n"
                      "  url: http://127.0.0.1:9090\n"
                      "  entities:\n"
                      "    service:\n"
                      "      metrics:\n"
                      "        error_rate: 'sum(rate(x{code=~\"5..\",service=\"$entity\"}[5m]))'\n"
                      "        latency_p99_ms: {query: 'p99{s=\"$entity\"}', baseline: "
                      "'p99_usual{s=\"$entity\"}'}\n"
                      "      fields: {replicas: 'r{s=\"$entity\"}'}\n",
                      "cfg.yaml");
  CAF_REQUIRE(cfg.has_value());
  const auto& prom = cfg->section<plugins::prometheus::settings>();
  const auto& m = prom.entities.at("service");
  CAF_CHECK_EQUAL(m.metrics.at("error_rate").query,
                  "sum(rate(x{code=~\"5..\",service=\"$entity\"}[5m]))");
  CAF_CHECK_EQUAL(m.metrics.at("error_rate").baseline, "");
  CAF_CHECK_EQUAL(m.metrics.at("latency_p99_ms").baseline, "p99_usual{s=\"$entity\"}");
  CAF_CHECK_EQUAL(m.fields.at("replicas"), "r{s=\"$entity\"}");
  CAF_CHECK_EQUAL(prom.baseline, "avg_over_time(($query)[1h:1m] offset 1d)");
  const std::string url = "prometheus:\n  url: http://127.0.0.1:9090\n";
  CAF_CHECK_EQUAL(err(url + "  entities: {pod: {metrics: {cpu: 'c{p=\"$entity\"}'}}}\n"),
                  std::string{"cfg.yaml:3:19: prometheus.entities.pod: 'pod' is not an entity "
                              "kind the reasoner observes (service, database, cache, queue, "
                              "host, job)"});
  CAF_CHECK_EQUAL(err(url + "  entities: {service: {metrics: {cpu: 'cpu_total'}}}\n"),
                  std::string{"cfg.yaml:3:39: prometheus.entities.service.metrics.cpu: "
                              "'cpu_total' does not name the entity: write $entity where its "
                              "name goes (service=\"$entity\")"});
  CAF_CHECK_EQUAL(err(url + "  entities: {service: {metrics: {}}}\n"),
                  std::string{"cfg.yaml:3:23: prometheus.entities.service: names no metrics"});
  CAF_CHECK_EQUAL(err(url + "  entities: {service: {metrix: {}}}\n"),
                  std::string{"cfg.yaml:3:24: prometheus.entities.service.metrix: unknown key "
                              "'metrix' (did you mean 'metrics'?)"});
  CAF_CHECK_EQUAL(err(url + "  baseline: 'x offset 1d'\n"),
                  std::string{"cfg.yaml:3:13: prometheus.baseline: must contain $query (the "
                              "metric's expression), or be \"\" for no baselines"});
  CAF_CHECK_EQUAL(err("prometheus:\n  entities: {job: {metrics: {t: 't{j=\"$entity\"}'}}}\n"),
                  std::string{"cfg.yaml:2:3: prometheus: entities need the url of the "
                              "Prometheus to query"});
  CAF_CHECK_EQUAL(err("tools: {disable: [a, '']}\n"),
                  std::string{"cfg.yaml:1:22: tools.disable[1]: must not be empty"});
}

CAF_TEST(model routes and fallback chain) {
  ::setenv("SREH_TEST_MODEL_KEY", "sk-test-key", 1);
  auto r = load_string("model:\n  provider: openai\n  base_url: http://127.0.0.1:8000/v1/\n"
                       "  model: qwen\n  api_key: ${SREH_TEST_MODEL_KEY}\n  stream: true\n"
                       "  max_attempts: 2\n  price: {input: 1.5, output: 2}\n"
                       "  fallback: [claude, builtin]\n"
                       "models:\n  claude:\n    provider: anthropic\n"
                       "    base_url: https://api.anthropic.com\n    model: c\n",
                       "cfg.yaml");
  CAF_REQUIRE(r.has_value());
  CAF_CHECK_EQUAL(r->model.provider, "openai");
  CAF_CHECK_EQUAL(r->model.main.base_url, "http://127.0.0.1:8000/v1"); // trailing '/' dropped
  CAF_CHECK_EQUAL(r->model.main.api_key, "sk-test-key");
  CAF_CHECK(r->model.main.stream);
  CAF_CHECK_EQUAL(r->model.main.max_attempts, 2);
  CAF_CHECK_EQUAL(r->model.main.input_price, 1.5);
  CAF_CHECK_EQUAL(r->model.fallback.size(), 2u);
  CAF_CHECK_EQUAL(r->model.routes.at("claude").provider, "anthropic");
  CAF_CHECK_EQUAL(r->model.main.max_concurrency, 64); // the defaults
  CAF_CHECK_EQUAL(r->model.main.max_queue, 1000);
  CAF_CHECK(!r->model.main.max_completion_tokens);
  auto o = load_string("model:\n  provider: openai\n  base_url: https://api.openai.com/v1\n"
                       "  model: o4-mini\n  max_completion_tokens: true\n",
                       "cfg.yaml");
  CAF_REQUIRE(o.has_value());
  CAF_CHECK(o->model.main.max_completion_tokens);
  ::unsetenv("SREH_TEST_MODEL_KEY");
}

CAF_TEST(model route concurrency limits) {
  auto r = load_string("model:\n  provider: openai\n  base_url: http://h/v1\n  model: m\n"
                       "  max_concurrency: 8\n  max_queue: 0\n  fallback: [b]\n"
                       "models:\n  b: {provider: anthropic, base_url: http://b, model: c, "
                       "max_concurrency: 2, max_queue: 50}\n",
                       "cfg.yaml");
  CAF_REQUIRE(r.has_value());
  CAF_CHECK_EQUAL(r->model.main.max_concurrency, 8);
  CAF_CHECK_EQUAL(r->model.main.max_queue, 0);
  CAF_CHECK_EQUAL(r->model.routes.at("b").max_concurrency, 2);
  CAF_CHECK_EQUAL(r->model.routes.at("b").max_queue, 50);
  const std::string route = "model:\n  provider: openai\n  base_url: http://h/v1\n  model: m\n";
  CAF_CHECK_EQUAL(err(route + "  max_concurrency: 0\n"),
                  "cfg.yaml:5:20: model.max_concurrency: expected an integer between 1 and "
                  "1000000, got 0");
  CAF_CHECK_EQUAL(err(route + "  max_queue: -1\n"),
                  "cfg.yaml:5:14: model.max_queue: expected an integer between 0 and 10000000, "
                  "got -1");
  CAF_CHECK_EQUAL(err(route + "  fallback: [b]\nmodels:\n  b:\n    provider: openai\n"
                              "    base_url: http://b/v1\n    model: c\n    max_concurrency: "
                              "many\n"),
                  "cfg.yaml:11:22: models.b.max_concurrency: expected an integer, got 'many'");
}

CAF_TEST(model route errors name the place and never the key) {
  CAF_CHECK_EQUAL(err("model:\n  provider: openai\n  model: m\n"),
                  "cfg.yaml:2:3: model: provider openai needs base_url");
  CAF_CHECK_EQUAL(err("model:\n  provider: anthropic\n  base_url: http://h\n  model: m\n"
                      "  fallback: [nowhere]\n"),
                  "cfg.yaml:5:14: model.fallback[0]: no route 'nowhere' in models (nor builtin)");
  CAF_CHECK_EQUAL(err("model:\n  provider: openai\n  base_url: ftp://h\n  model: m\n"),
                  "cfg.yaml:3:13: model.base_url: expected an http:// or https:// URL");
  auto e = err("model:\n  provider: openai\n  base_url: http://h/v1\n  model: m\n"
               "  api_key: sk-literal-key\n  max_attempts: 0\n");
  CAF_CHECK(e.find("model.max_attempts") != std::string::npos);
  CAF_CHECK(e.find("sk-literal-key") == std::string::npos);
}

CAF_TEST(nats tls files are read relative to the config file and go together) {
  const std::string dir = "/tmp/sreh_config_nats_tls_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir + "/certs");
  for (const char* f : {"/certs/ca.pem", "/certs/relay.pem", "/certs/relay.key"})
    std::ofstream{dir + f} << "pem\n";
  const std::string cfg_file = dir + "/sreh.yaml";
  std::ofstream{cfg_file} << "nats:\n  url: tls://localhost:4222\n  ca_file: certs/ca.pem\n"
                             "  cert_file: certs/relay.pem\n  key_file: certs/relay.key\n";
  auto ok = load_file(cfg_file);
  CAF_REQUIRE(ok.has_value());
  CAF_CHECK_EQUAL(ok->nats.ca_file, dir + "/certs/ca.pem");
  CAF_CHECK_EQUAL(ok->nats.cert_file, dir + "/certs/relay.pem");
  CAF_CHECK_EQUAL(ok->nats.key_file, dir + "/certs/relay.key");
  CAF_CHECK_EQUAL(err("nats:\n  url: tls://localhost:4222\n  ca_file: /nonexistent/ca.pem\n"),
                  std::string{"cfg.yaml:3:12: nats.ca_file: cannot read '/nonexistent/ca.pem': "
                              "No such file or directory"});
  CAF_CHECK_EQUAL(
    err("nats:\n  url: tls://localhost:4222\n  cert_file: " + dir + "/certs/relay.pem\n"),
    std::string{"cfg.yaml:2:3: nats: cert_file and key_file go together (the "
                "client certificate and its key)"});
  std::filesystem::remove_all(dir);
}
