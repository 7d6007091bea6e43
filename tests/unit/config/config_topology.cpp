#define CAF_SUITE config_topology
#include <caf/test/unit_test.hpp>
#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "app/serve/plugins.hpp"
#include "config/node/node_config.hpp"
#include "config/topology/topology.hpp"

using namespace sreh;
using namespace sreh::config;

namespace {

/// Two nodes; node-b has the default roles. Line 6 is node-a's id, line 10 node-b's.
const std::string two_nodes = R"(cluster: demo
heartbeat_ms: 500
lease_ttl_ms: 5000
connection_timeout_ms: 2000
nodes:
  - id: node-a
    http: 127.0.0.1:7071
    cluster: 127.0.0.1:7171
    roles: [api, worker, relay]
  - id: node-b
    http: 127.0.0.1:7072
    cluster: 127.0.0.1:7172
)";

/// A one-node topology whose node has the given YAML lines (indented under `- `).
std::string one_node(const std::string& fields) {
  return "nodes:\n  - " + fields;
}

/// Command-line settings: `--node-id id [--data-dir dir]`, `--listen address`.
overrides set_node(const std::string& id, const std::string& data_dir = "") {
  overrides o;
  o.node_id = id;
  o.data_dir = data_dir;
  return o;
}

overrides set_listen(const std::string& address) {
  overrides o;
  o.listen = address;
  return o;
}

/// The error of loading topology `yaml` as "topo.yaml", or "(ok)".
std::string terr(const std::string& yaml) {
  auto r = load_topology_string(yaml, "topo.yaml");
  if (r)
    return "(ok)";
  if (r.error().code != errc::invalid_argument)
    return "(wrong code) " + r.error().message;
  return r.error().message;
}

/// A scratch directory with a topology file in it, removed at the end of the test.
struct scratch {
  std::filesystem::path dir =
    std::filesystem::temp_directory_path() / ("sreh_config_topology_" + std::to_string(::getpid()));
  std::string topo = (dir / "topology.yaml").string();

  explicit scratch(const std::string& topology_text = two_nodes) {
    std::filesystem::create_directories(dir);
    std::ofstream{topo} << topology_text;
  }
  ~scratch() { std::filesystem::remove_all(dir); }

  /// The error of loading node config `yaml` (as "cfg.yaml") with `o`, or "(ok)".
  std::string err(const std::string& yaml, const overrides& o = {}) const {
    auto r = load_string(yaml, "cfg.yaml", o);
    return r ? "(ok)" : r.error().message;
  }

  /// A node config in cluster mode with the shared store and a relay, plus `extra`.
  std::string node(const std::string& extra = "") const {
    return "node_id: node-b\nstore: {kind: postgres, url: postgres://h/db}\n"
           "nats: {url: nats://127.0.0.1:4222}\ncluster:\n  topology: " +
           topo + "\n" + extra;
  }
};

} // namespace

CAF_TEST(a valid topology loads with its defaults) {
  auto r = load_topology_string(two_nodes, "topo.yaml");
  CAF_REQUIRE(r.has_value());
  CAF_CHECK_EQUAL(r->name, std::string{"demo"});
  CAF_CHECK_EQUAL(r->source, std::string{"topo.yaml"});
  CAF_CHECK_EQUAL(r->heartbeat_ms, 500);
  CAF_CHECK_EQUAL(r->lease_ttl_ms, 5000);
  CAF_CHECK_EQUAL(r->connection_timeout_ms, 2000);
  CAF_REQUIRE_EQUAL(r->nodes.size(), 2u);
  CAF_CHECK_EQUAL(r->nodes[0].id, std::string{"node-a"});
  CAF_CHECK_EQUAL(r->nodes[0].http, std::string{"127.0.0.1:7071"});
  CAF_CHECK_EQUAL(r->nodes[0].cluster, std::string{"127.0.0.1:7171"});
  CAF_CHECK_EQUAL(r->nodes[1].roles.size(), 3u);
  for (const char* role : {"api", "worker", "relay"})
    CAF_CHECK(r->nodes[1].has_role(role));
  CAF_CHECK(!r->nodes[1].has_role("admin"));
  CAF_REQUIRE(r->find("node-b") != nullptr);
  CAF_CHECK_EQUAL(r->find("node-b")->http, std::string{"127.0.0.1:7072"});
  CAF_CHECK(r->find("node-z") == nullptr);
  // Only nodes is required; the rest has defaults.
  auto minimal = load_topology_string(one_node("{id: solo, http: h:1, cluster: h:2}\n"), "t");
  CAF_REQUIRE(minimal.has_value());
  CAF_CHECK_EQUAL(minimal->name, std::string{"sreh"});
  CAF_CHECK_EQUAL(minimal->heartbeat_ms, 500);
  CAF_CHECK_EQUAL(minimal->lease_ttl_ms, 5000);
  CAF_CHECK_EQUAL(minimal->connection_timeout_ms, 2000);
  CAF_CHECK_EQUAL(minimal->nodes[0].roles, (std::vector<std::string>{"api", "worker", "relay"}));
}

CAF_TEST(the example topology is valid) {
  auto path = std::filesystem::path{SREH_SOURCE_DIR} / "examples" / "cluster" / "topology.yaml";
  auto r = load_topology(path.string());
  if (!r)
    CAF_FAIL(r.error().message);
  CAF_CHECK_EQUAL(r->name, std::string{"demo"});
  CAF_REQUIRE_EQUAL(r->nodes.size(), 3u);
  const char* ids[] = {"node-a", "node-b", "node-c"};
  for (std::size_t i = 0; i < 3; ++i) {
    CAF_CHECK_EQUAL(r->nodes[i].id, std::string{ids[i]});
    CAF_CHECK_EQUAL(r->nodes[i].http, "127.0.0.1:" + std::to_string(7071 + i));
    CAF_CHECK_EQUAL(r->nodes[i].cluster, "127.0.0.1:" + std::to_string(7171 + i));
    CAF_CHECK_EQUAL(r->nodes[i].roles.size(), 3u);
  }
}

CAF_TEST(unknown keys suggest the closest one) {
  CAF_CHECK_EQUAL(terr("hearbeat_ms: 100\n" + one_node("{id: a, http: h:1, cluster: h:2}\n")),
                  std::string{"topo.yaml:1:1: hearbeat_ms: unknown key 'hearbeat_ms' (did you mean "
                              "'heartbeat_ms'?)"});
  CAF_CHECK_EQUAL(terr(one_node("id: a\n    htp: h:1\n    cluster: h:2\n")),
                  std::string{"topo.yaml:3:5: nodes[0].htp: unknown key 'htp' (did you mean "
                              "'http'?)"});
  CAF_CHECK_EQUAL(terr(one_node("{id: a, http: h:1, cluster: h:2, zzzzzz: 1}\n")),
                  std::string{"topo.yaml:2:38: nodes[0].zzzzzz: unknown key 'zzzzzz' (expected "
                              "one of id, http, cluster, roles)"});
}

CAF_TEST(wrong types) {
  CAF_CHECK_EQUAL(terr("heartbeat_ms: fast\n"),
                  std::string{"topo.yaml:1:15: heartbeat_ms: expected an integer, got 'fast'"});
  CAF_CHECK_EQUAL(terr("nodes: {id: a}\n"),
                  std::string{"topo.yaml:1:8: nodes: expected a sequence (e.g. [a, b])"});
  CAF_CHECK_EQUAL(terr("nodes:\n  - node-a\n"),
                  std::string{"topo.yaml:2:5: nodes[0]: expected a mapping with 'id', 'http', "
                              "'cluster' and optionally 'roles'"});
  CAF_CHECK_EQUAL(terr(one_node("{id: a, http: h:1, cluster: h:2, roles: api}\n")),
                  std::string{"topo.yaml:2:45: nodes[0].roles: expected a sequence (e.g. [a, "
                              "b])"});
  CAF_CHECK_EQUAL(terr(one_node("{id: [a], http: h:1, cluster: h:2}\n")),
                  std::string{"topo.yaml:2:10: nodes[0].id: expected a string, got a sequence"});
  CAF_CHECK_EQUAL(terr("- a\n"),
                  std::string{"topo.yaml:1:1: (top level): expected a mapping with 'cluster' and "
                              "'nodes'"});
  CAF_CHECK(terr("nodes: [\n").find("topo.yaml:2:1: invalid YAML:") == 0);
}

CAF_TEST(a topology needs nodes with id http and cluster) {
  CAF_CHECK_EQUAL(terr(""), std::string{"topo.yaml: nodes: missing: a topology lists at least "
                                        "one node"});
  CAF_CHECK_EQUAL(terr("cluster: x\nnodes: []\n"),
                  std::string{"topo.yaml:2:8: nodes: must list at least one node"});
  CAF_CHECK_EQUAL(terr("cluster: x\nnodes:\n"),
                  std::string{"topo.yaml:2:1: nodes: must list at least one node"});
  CAF_CHECK_EQUAL(terr(one_node("{http: h:1, cluster: h:2}\n")),
                  std::string{"topo.yaml:2:5: nodes[0]: missing key 'id'"});
  CAF_CHECK_EQUAL(terr(one_node("{id: a, cluster: h:2}\n")),
                  std::string{"topo.yaml:2:5: nodes[0]: missing key 'http'"});
  CAF_CHECK_EQUAL(terr(one_node("{id: a, http: h:1}\n")),
                  std::string{"topo.yaml:2:5: nodes[0]: missing key 'cluster'"});
}

CAF_TEST(duplicate node ids name both lines) {
  auto text = two_nodes;
  text.replace(text.find("id: node-b"), 10, "id: node-a");
  CAF_CHECK_EQUAL(terr(text),
                  std::string{"topo.yaml:10:9: nodes[1].id: duplicate node id 'node-a' (first at "
                              "topo.yaml:6:9)"});
}

CAF_TEST(ids and the cluster name are short lower case names) {
  auto expect = [](std::string_view what, std::string_view got) {
    return fmt::format("expected a {} of 1 to 63 lower-case letters, digits, '_' and '-', "
                       "starting with a letter or digit, got '{}'",
                       what, got);
  };
  CAF_CHECK_EQUAL(terr(one_node("{id: Node-A, http: h:1, cluster: h:2}\n")),
                  "topo.yaml:2:10: nodes[0].id: " + expect("node id", "Node-A"));
  CAF_CHECK_EQUAL(terr(one_node("{id: -a, http: h:1, cluster: h:2}\n")),
                  "topo.yaml:2:10: nodes[0].id: " + expect("node id", "-a"));
  CAF_CHECK_EQUAL(terr(one_node("{id: \"\", http: h:1, cluster: h:2}\n")),
                  "topo.yaml:2:10: nodes[0].id: " + expect("node id", ""));
  std::string long_id(64, 'a');
  CAF_CHECK_EQUAL(terr(one_node("{id: " + long_id + ", http: h:1, cluster: h:2}\n")),
                  "topo.yaml:2:10: nodes[0].id: " + expect("node id", long_id));
  CAF_CHECK_EQUAL(terr(one_node("{id: " + long_id.substr(1) + ", http: h:1, cluster: h:2}\n")),
                  std::string{"(ok)"});
  CAF_CHECK_EQUAL(terr(one_node("{id: 0_a-b, http: h:1, cluster: h:2}\n")), std::string{"(ok)"});
  CAF_CHECK_EQUAL(terr("cluster: my cluster\n"),
                  "topo.yaml:1:10: cluster: " + expect("cluster name", "my cluster"));
}

CAF_TEST(addresses are host and port) {
  CAF_CHECK_EQUAL(terr(one_node("{id: a, http: localhost, cluster: h:2}\n")),
                  std::string{"topo.yaml:2:19: nodes[0].http: expected host:port, got "
                              "'localhost'"});
  CAF_CHECK_EQUAL(terr(one_node("{id: a, http: h:1, cluster: \"h:70000\"}\n")),
                  std::string{"topo.yaml:2:33: nodes[0].cluster: expected a port between 0 and "
                              "65535, got 'h:70000'"});
  CAF_CHECK_EQUAL(terr(one_node("{id: a, http: \"127.0.0.1:0\", cluster: h:2}\n")),
                  std::string{"topo.yaml:2:19: nodes[0].http: expected a port between 1 and 65535 "
                              "(other nodes dial it), got '127.0.0.1:0'"});
  CAF_CHECK_EQUAL(terr(one_node("{id: a, http: \"[::1]:1\", cluster: \"[::1]:2\"}\n")),
                  std::string{"(ok)"});
}

CAF_TEST(an address is used once across all nodes) {
  auto text = two_nodes;
  text.replace(text.find("127.0.0.1:7072"), 14, "127.0.0.1:7071");
  CAF_CHECK_EQUAL(
    terr(text), std::string{"topo.yaml:11:11: nodes[1].http: address 127.0.0.1:7071 is already "
                            "used by nodes[0].http (node 'node-a', at topo.yaml:7:11); every node "
                            "needs its own http and cluster addresses"});
  text = two_nodes;
  text.replace(text.find("127.0.0.1:7172"), 14, "127.0.0.1:7071");
  CAF_CHECK_EQUAL(terr(text),
                  std::string{"topo.yaml:12:14: nodes[1].cluster: address 127.0.0.1:7071 is "
                              "already used by nodes[0].http (node 'node-a', at topo.yaml:7:11); "
                              "every node needs its own http and cluster addresses"});
  // Within one node, and host names compare without case.
  CAF_CHECK_EQUAL(terr(one_node("{id: a, http: Host:1, cluster: host:1}\n")),
                  std::string{"topo.yaml:2:36: nodes[0].cluster: address host:1 is already used "
                              "by nodes[0].http (node 'a', at topo.yaml:2:19); every node needs "
                              "its own http and cluster addresses"});
  // The same port on another host is another address.
  CAF_CHECK_EQUAL(terr(one_node("{id: a, http: h1:1, cluster: h2:1}\n")), std::string{"(ok)"});
}

CAF_TEST(roles are api worker and relay) {
  CAF_CHECK_EQUAL(terr(one_node("{id: a, http: h:1, cluster: h:2, roles: [api, boss]}\n")),
                  std::string{"topo.yaml:2:51: nodes[0].roles[1]: expected one of api, worker, "
                              "relay, got 'boss'"});
  CAF_CHECK_EQUAL(terr(one_node("{id: a, http: h:1, cluster: h:2, roles: []}\n")),
                  std::string{"topo.yaml:2:45: nodes[0].roles: must not be empty: list some of "
                              "api, worker, relay (or leave roles out for all three)"});
  CAF_CHECK_EQUAL(terr(one_node("{id: a, http: h:1, cluster: h:2, roles: [api, worker, api]}\n")),
                  std::string{"topo.yaml:2:59: nodes[0].roles[2]: role 'api' is listed twice"});
  auto two = [](const char* roles_a, const char* roles_b) {
    return fmt::format("nodes:\n  - {{id: a, http: h:1, cluster: h:2, roles: {}}}\n"
                       "  - {{id: b, http: h:3, cluster: h:4, roles: {}}}\n",
                       roles_a, roles_b);
  };
  CAF_CHECK_EQUAL(terr(two("[api]", "[worker]")), std::string{"(ok)"});
  CAF_CHECK_EQUAL(terr(two("[api, relay]", "[relay]")),
                  std::string{"topo.yaml:2:3: nodes: no node has the worker role: no run would "
                              "ever execute"});
  CAF_CHECK_EQUAL(terr(two("[worker]", "[worker, relay]")),
                  std::string{"topo.yaml:2:3: nodes: no node has the api role: nothing would "
                              "accept goals or serve the API"});
}

CAF_TEST(timing settings are bounded) {
  auto node = one_node("{id: a, http: h:1, cluster: h:2}\n");
  CAF_CHECK_EQUAL(terr("heartbeat_ms: 10\n" + node),
                  std::string{"topo.yaml:1:15: heartbeat_ms: expected an integer between 50 and "
                              "60000, got 10"});
  CAF_CHECK_EQUAL(terr("heartbeat_ms: 60001\n" + node),
                  std::string{"topo.yaml:1:15: heartbeat_ms: expected an integer between 50 and "
                              "60000, got 60001"});
  CAF_CHECK_EQUAL(terr("heartbeat_ms: 500\nlease_ttl_ms: 1499\n" + node),
                  std::string{"topo.yaml:2:15: lease_ttl_ms: 1499 is less than 3 * heartbeat_ms "
                              "(3 * 500 = 1500): a lease must survive at least 3 missed "
                              "heartbeats"});
  CAF_CHECK_EQUAL(terr("heartbeat_ms: 500\nlease_ttl_ms: 1500\n" + node), std::string{"(ok)"});
  // The default lease (5000 ms) is too short for a 2 s heartbeat: point at the heartbeat.
  CAF_CHECK_EQUAL(terr("cluster: x\nheartbeat_ms: 2000\n" + node),
                  std::string{"topo.yaml:2:15: lease_ttl_ms: 5000 (the default) is less than 3 * "
                              "heartbeat_ms (3 * 2000 = 6000): a lease must survive at least 3 "
                              "missed heartbeats"});
  CAF_CHECK_EQUAL(terr("connection_timeout_ms: 0\n" + node),
                  std::string{"topo.yaml:1:24: connection_timeout_ms: expected an integer between "
                              "100 and 60000, got 0"});
  CAF_CHECK_EQUAL(terr("connection_timeout_ms: 600000\n" + node),
                  std::string{"topo.yaml:1:24: connection_timeout_ms: expected an integer between "
                              "100 and 60000, got 600000"});
}

CAF_TEST(environment variables are expanded) {
  ::setenv("SREH_TEST_TOPO_HOST", "10.0.0.7", 1);
  ::unsetenv("SREH_TEST_TOPO_UNSET");
  auto r = load_topology_string(
    one_node("{id: a, http: \"${SREH_TEST_TOPO_HOST}:7071\", cluster: h:2}\n"), "t");
  CAF_REQUIRE(r.has_value());
  CAF_CHECK_EQUAL(r->nodes[0].http, std::string{"10.0.0.7:7071"});
  CAF_CHECK_EQUAL(terr(one_node("{id: a, http: \"${SREH_TEST_TOPO_UNSET}:1\", cluster: h:2}\n")),
                  std::string{"topo.yaml:2:19: nodes[0].http: environment variable "
                              "'SREH_TEST_TOPO_UNSET' is not set"});
}

CAF_TEST(topology files) {
  auto missing = load_topology("/nonexistent/topology.yaml");
  CAF_REQUIRE(!missing.has_value());
  CAF_CHECK_EQUAL(
    missing.error().message,
    std::string{"/nonexistent/topology.yaml: cannot read: No such file or directory"});
  scratch s{"nodes:\n  - {id: a, http: h:1, cluster: h:1}\n"};
  auto bad = load_topology(s.topo);
  CAF_REQUIRE(!bad.has_value());
  CAF_CHECK(bad.error().message.starts_with(s.topo + ":2:33: nodes[0].cluster: address h:1"));
}

// -- node config in cluster mode -----------------------------------------------------------------

CAF_TEST(a member takes its listen address and data dir from the topology) {
  scratch s;
  auto r = load_string(s.node(), "cfg.yaml");
  if (!r)
    CAF_FAIL(r.error().message);
  CAF_CHECK_EQUAL(r->cluster.topology, s.topo);
  CAF_REQUIRE(r->cluster.topo.has_value());
  CAF_CHECK_EQUAL(r->cluster.topo->name, std::string{"demo"});
  CAF_CHECK_EQUAL(r->cluster.topo->source, s.topo);
  CAF_CHECK_EQUAL(r->listen, std::string{"127.0.0.1:7072"});
  CAF_CHECK_EQUAL(r->data_dir, std::string{"./data/node-b"});
  // An explicit data_dir (file or command line) and an equal listen are kept.
  r = load_string(s.node("data_dir: /srv/b\nlisten: 127.0.0.1:7072\n"), "cfg.yaml");
  CAF_REQUIRE(r.has_value());
  CAF_CHECK_EQUAL(r->data_dir, std::string{"/srv/b"});
  CAF_CHECK_EQUAL(r->listen, std::string{"127.0.0.1:7072"});
  r = load_string(s.node(), "cfg.yaml", set_node("node-a", "/d"));
  CAF_REQUIRE(r.has_value());
  CAF_CHECK_EQUAL(r->node_id, std::string{"node-a"});
  CAF_CHECK_EQUAL(r->listen, std::string{"127.0.0.1:7071"});
  CAF_CHECK_EQUAL(r->data_dir, std::string{"/d"});
  // finalize again (as `sreh config check` may) keeps the result.
  CAF_CHECK(!finalize(*r));
  CAF_CHECK_EQUAL(r->listen, std::string{"127.0.0.1:7071"});
  CAF_CHECK(r->cluster.topo.has_value());
  // Without a topology there is no cluster.
  auto plain = load_string("node_id: node-b\n", "cfg.yaml");
  CAF_REQUIRE(plain.has_value());
  CAF_CHECK(!plain->cluster.topo.has_value());
  CAF_CHECK_EQUAL(plain->data_dir, std::string{"./data"});
}

CAF_TEST(the node must be a member) {
  scratch s;
  auto text = s.node();
  text.replace(0, 15, "node_id: node-z");
  CAF_CHECK_EQUAL(s.err(text), "cfg.yaml:1:10: node_id: 'node-z' is not in topology " + s.topo +
                                 " (nodes: node-a, node-b)");
  // Named on the command line: no line of the file is to blame.
  CAF_CHECK_EQUAL(s.err(s.node(), set_node("node-q")),
                  "cfg.yaml: node_id: 'node-q' is not in topology " + s.topo +
                    " (nodes: node-a, node-b)");
  CAF_CHECK_EQUAL(s.err(s.node(), set_node("node-a")), std::string{"(ok)"});
}

CAF_TEST(a cluster needs postgres and nats) {
  scratch s;
  auto sqlite = s.node();
  sqlite.replace(sqlite.find("postgres,"), 9, "sqlite,");
  CAF_CHECK_EQUAL(s.err(sqlite), std::string{"cfg.yaml:2:15: store.kind: a cluster needs the "
                                             "shared PostgreSQL store: set store.kind: postgres"});
  CAF_CHECK_EQUAL(s.err("node_id: node-b\ncluster: {topology: " + s.topo + "}\n"),
                  std::string{"cfg.yaml: store.kind: a cluster needs the shared PostgreSQL store: "
                              "set store.kind: postgres"});
  auto no_nats = s.node();
  no_nats.replace(no_nats.find("nats: {url: nats://127.0.0.1:4222}"), 34, "nats: {url: \"\"}");
  CAF_CHECK_EQUAL(s.err(no_nats),
                  std::string{"cfg.yaml:3:13: nats.url: required in a cluster: SSE across nodes "
                              "and the relay need JetStream (nats://host:port)"});
}

CAF_TEST(an explicit listen must be the topology address) {
  scratch s;
  CAF_CHECK_EQUAL(s.err(s.node("listen: 127.0.0.1:7070\n")),
                  "cfg.yaml:6:9: listen: 127.0.0.1:7070 differs from 127.0.0.1:7072, the http "
                  "address of node 'node-b' in topology " +
                    s.topo +
                    ": leave listen out (a cluster node listens on its topology address) or "
                    "make them equal");
  CAF_CHECK_EQUAL(s.err(s.node(), set_listen("0.0.0.0:7072")),
                  "cfg.yaml: listen: 0.0.0.0:7072 differs from 127.0.0.1:7072, the http address "
                  "of node 'node-b' in topology " +
                    s.topo +
                    ": leave listen out (a cluster node listens on its topology address) or "
                    "make them equal");
}

CAF_TEST(topology errors name the config field and the topology line) {
  scratch s{"nodes:\n  - {id: node-b, http: h:1, cluster: h:2, roles: [relay]}\n"};
  CAF_CHECK_EQUAL(s.err(s.node()),
                  "cfg.yaml:5:13: cluster.topology: " + s.topo +
                    ":2:3: nodes: no node has the worker role: no run would ever execute");
  CAF_CHECK_EQUAL(s.err("cluster:\n  topology: /nonexistent/t.yaml\n"),
                  std::string{"cfg.yaml:2:13: cluster.topology: cannot read "
                              "'/nonexistent/t.yaml': No such file or directory"});
  CAF_CHECK_EQUAL(s.err("cluster:\n  topolgy: t.yaml\n"),
                  std::string{"cfg.yaml:2:3: cluster.topolgy: unknown key 'topolgy' (did you "
                              "mean 'topology'?)"});
}

CAF_TEST(the example node config serves every node of the example topology) {
  ::setenv("SREH_PG_URL", "postgres://u:p@localhost/sreh", 1);
  ::setenv("SREH_NATS_URL", "nats://127.0.0.1:4222", 1);
  const std::string digest(64, 'a'); // examples/cluster/start.sh exports the tokens' digests
  ::setenv("SREH_ADMIN_SHA256", digest.c_str(), 1);
  ::setenv("SREH_APPROVER_SHA256", digest.c_str(), 1);
  auto path = std::filesystem::path{SREH_SOURCE_DIR} / "examples" / "cluster" / "node.yaml";
  const auto regs = app::registries(); // the example has a sandbox: section
  for (const char* id : {"node-a", "node-b", "node-c"}) {
    auto r = load_file(path.string(), set_node(id), &regs.kinds, &regs.sections);
    if (!r)
      CAF_FAIL(r.error().message);
    CAF_CHECK_EQUAL(r->store.kind, std::string{"postgres"});
    CAF_CHECK_EQUAL(r->store.url, std::string{"postgres://u:p@localhost/sreh"});
    CAF_CHECK_EQUAL(r->policy_mode, std::string{"autonomous"});
    CAF_CHECK_EQUAL(r->data_dir, std::string{"./data/"} + id);
    CAF_CHECK_EQUAL(r->auth.tokens.size(), 2u); // one set of tokens for every node
    CAF_REQUIRE(r->cluster.topo.has_value());
    CAF_CHECK_EQUAL(r->listen, r->cluster.topo->find(id)->http);
  }
}

CAF_TEST(the example tls config serves every node with tls on every link) {
  // examples/cluster/start.sh --tls makes the certificates in SREH_TLS_DIR; loading only
  // needs the files to be readable.
  const std::string dir = "/tmp/sreh_example_tls_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  for (const char* name : {"ca", "node-a", "node-b", "node-c", "server", "relay"})
    for (const char* ext : {".pem", ".key"})
      std::ofstream{dir + "/" + name + ext} << "pem\n";
  ::setenv("SREH_TLS_DIR", dir.c_str(), 1);
  ::setenv("SREH_PG_URL", "postgresql://postgres@127.0.0.1:55433/sreh?sslmode=verify-full", 1);
  ::setenv("SREH_NATS_URL", "tls://localhost:4223", 1);
  const std::string digest(64, 'a');
  ::setenv("SREH_ADMIN_SHA256", digest.c_str(), 1);
  ::setenv("SREH_APPROVER_SHA256", digest.c_str(), 1);
  auto path = std::filesystem::path{SREH_SOURCE_DIR} / "examples" / "cluster" / "node-tls.yaml";
  const auto regs = app::registries();
  for (const char* id : {"node-a", "node-b", "node-c"}) {
    auto r = load_file(path.string(), set_node(id), &regs.kinds, &regs.sections);
    if (!r)
      CAF_FAIL(r.error().message);
    CAF_CHECK_EQUAL(r->tls.cert_file, dir + "/server.pem");
    CAF_CHECK_EQUAL(r->nats.ca_file, dir + "/ca.pem");
    CAF_CHECK_EQUAL(r->nats.cert_file, dir + "/relay.pem");
    CAF_REQUIRE(r->cluster.topo.has_value());
    CAF_REQUIRE(r->cluster.topo->tls.has_value());
    CAF_CHECK_EQUAL(r->cluster.topo->tls->cert_file, dir + "/{node}.pem");
    CAF_CHECK_EQUAL(r->listen, r->cluster.topo->find(id)->http);
  }
  std::filesystem::remove_all(dir);
}
