#define CAF_SUITE config_yaml
#include <cstdlib>
#include <regex>
#include <string>
#include <vector>

#include "config/node/node_config.hpp"
#include "config/policy/policy_config.hpp"
#include "config/topology/topology.hpp"
#include "config/yaml/reader.hpp"
#include "plugins/models/builtin/knowledge_base.hpp"
#include "plugins/tools/sandbox/scenario.hpp"
#include "tests/support/caf_test.hpp"

using namespace sreh;
namespace yaml = sreh::config::yaml;

namespace {

/// What `read(reader, document)` threw for `text` read as "f.yaml", or "(ok)".
template <class F>
std::string error_of(const std::string& text, F read, yaml::reader_options o = {}) {
  yaml::reader r{"f.yaml", o};
  try {
    read(r, r.parse(text));
    return "(ok)";
  } catch (const yaml::load_error& e) {
    return e.message;
  }
}

} // namespace

CAF_TEST(the tree keeps order marks duplicates and quoting) {
  auto root = yaml::parse("b: 1\na: '2'\nb: [x, {y: z}]\nc:\n");
  CAF_REQUIRE(root.is_mapping());
  auto pairs = root.pairs();
  CAF_REQUIRE_EQUAL(pairs.size(), 4u);
  CAF_CHECK_EQUAL(pairs[0].first.scalar(), std::string{"b"});
  CAF_CHECK_EQUAL(pairs[2].first.scalar(), std::string{"b"}); // duplicates kept, in order
  CAF_CHECK(!pairs[0].second.quoted());
  CAF_CHECK(pairs[1].second.quoted());
  CAF_CHECK_EQUAL(pairs[1].second.mark().line, 1);
  CAF_CHECK_EQUAL(pairs[1].second.mark().column, 3);
  CAF_CHECK(pairs[3].second.is_null());
  auto items = pairs[2].second.items();
  CAF_REQUIRE_EQUAL(items.size(), 2u);
  CAF_CHECK_EQUAL(items[1].find("y")->scalar(), std::string{"z"});
  CAF_CHECK(!items[1].find("nope"));
  CAF_CHECK_EQUAL(root.find("b")->scalar(), std::string{"1"}); // the first one
  CAF_CHECK_EQUAL(std::string{root.find("b")->kind_name()}, "a scalar");
  CAF_CHECK(yaml::parse("").is_null());
  CAF_CHECK(!yaml::node{}.mark().known());
}

CAF_TEST(every failure names file line column and path) {
  auto entries = [](yaml::reader& r, const yaml::entry& e) {
    for (const auto& f : r.entries(e, {"listen", "store"}))
      (void)r.entries(f, {"kind"});
  };
  CAF_CHECK_EQUAL(error_of("store: {kind: x}\nlissten: 1\n", entries),
                  "f.yaml:2:1: lissten: unknown key 'lissten' (did you mean 'listen'?)");
  CAF_CHECK_EQUAL(error_of("store: {zzzz: x}\n", entries),
                  "f.yaml:1:9: store.zzzz: unknown key 'zzzz' (expected one of kind)");
  CAF_CHECK_EQUAL(error_of("store: {}\nstore: {}\n", entries), "f.yaml:2:1: store: duplicate key");
  CAF_CHECK_EQUAL(error_of("store: 3\n", entries),
                  "f.yaml:1:8: store: expected a mapping, got a scalar");
  CAF_CHECK_EQUAL(error_of("- 1\n", entries),
                  "f.yaml:1:1: (top level): expected a mapping, got a sequence");
  CAF_CHECK_EQUAL(error_of("store: [\n", entries),
                  "f.yaml:2:1: invalid YAML: end of sequence flow not found");
  CAF_CHECK_EQUAL(error_of("store: [\n", entries, {.syntax_label = ""}),
                  "f.yaml:2:1: end of sequence flow not found");
}

CAF_TEST(scalars are typed and quoted scalars are strings) {
  auto first = [](auto read) {
    return [read](yaml::reader& r, const yaml::entry& e) { read(r, r.pairs(e).at(0)); };
  };
  auto integer = first([](yaml::reader& r, const yaml::entry& e) { (void)r.integer(e, 1, 9); });
  auto number = first([](yaml::reader& r, const yaml::entry& e) { (void)r.number(e); });
  auto boolean = first([](yaml::reader& r, const yaml::entry& e) { (void)r.boolean(e); });
  auto items = first([](yaml::reader& r, const yaml::entry& e) { (void)r.non_empty_items(e); });
  CAF_CHECK_EQUAL(error_of("n: 3\n", integer), "(ok)");
  CAF_CHECK_EQUAL(error_of("n: \"3\"\n", integer), "f.yaml:1:4: n: expected an integer, got '3'");
  CAF_CHECK_EQUAL(error_of("n: 10\n", integer),
                  "f.yaml:1:4: n: expected an integer between 1 and 9, got 10");
  CAF_CHECK_EQUAL(error_of("n: [1]\n", integer),
                  "f.yaml:1:4: n: expected an integer, got a sequence");
  CAF_CHECK_EQUAL(error_of("n: -2.5\n", number), "(ok)");
  CAF_CHECK_EQUAL(error_of("n: inf\n", number), "f.yaml:1:4: n: expected a number, got 'inf'");
  CAF_CHECK_EQUAL(error_of("b: True\n", boolean), "(ok)");
  CAF_CHECK_EQUAL(error_of("b: yes\n", boolean),
                  "f.yaml:1:4: b: expected true or false, got 'yes'");
  CAF_CHECK_EQUAL(error_of("b:\n", boolean), "f.yaml:1:1: b: expected true or false, got nothing");
  CAF_CHECK_EQUAL(error_of("l: []\n", items), "f.yaml:1:4: l: must not be empty");
  CAF_CHECK_EQUAL(error_of("l: x\n", items), "f.yaml:1:4: l: expected a sequence (e.g. [a, b])");
  std::string json;
  CAF_CHECK_EQUAL(
    error_of("a: {n: 3, x: 2.5, s: '4', t: true, z: ~, l: [a]}\n",
             first([&](yaml::reader& r, const yaml::entry& e) { json = r.json_object(e); })),
    "(ok)");
  CAF_CHECK_EQUAL(json, std::string{R"({"n":3,"x":2.5,"s":"4","t":true,"z":null,"l":["a"]})"});
}

CAF_TEST(environment variables are replaced only when the options say so) {
  ::setenv("SREH_TEST_YAML_VAR", "v", 1);
  std::string got;
  auto read = [&](yaml::reader& r, const yaml::entry& e) { got = r.string(r.pairs(e).at(0)); };
  CAF_CHECK_EQUAL(error_of("s: a-${SREH_TEST_YAML_VAR}\n", read, {.substitute_env = true}), "(ok)");
  CAF_CHECK_EQUAL(got, std::string{"a-v"});
  CAF_CHECK_EQUAL(error_of("s: a-${SREH_TEST_YAML_VAR}\n", read), "(ok)");
  CAF_CHECK_EQUAL(got, std::string{"a-${SREH_TEST_YAML_VAR}"});
}

CAF_TEST(free form pairs reject empty and duplicate keys) {
  auto read = [](yaml::reader& r, const yaml::entry& e) { (void)r.pairs(r.pairs(e).at(0)); };
  CAF_CHECK_EQUAL(error_of("l: {a: 1, b: 2}\n", read), "(ok)");
  CAF_CHECK_EQUAL(error_of("l:\n", read), "(ok)");
  CAF_CHECK_EQUAL(error_of("l: {a: 1, a: 2}\n", read), "f.yaml:1:11: l.a: duplicate key");
  CAF_CHECK_EQUAL(error_of("l: {\"\": 1}\n", read),
                  "f.yaml:1:5: l: expected a non-empty string key");
}

CAF_TEST(one edit distance gives every hint) {
  CAF_CHECK_EQUAL(yaml::edit_distance("lissten", "listen"), 1u);
  CAF_CHECK_EQUAL(yaml::edit_distance("", "abc"), 3u);
  std::vector<std::string_view> names{"replicas", "calls", "kind"};
  CAF_CHECK_EQUAL(yaml::closest("replicaz", names), std::string_view{"replicas"});
  CAF_CHECK_EQUAL(yaml::closest("zzzzzz", names), std::string_view{});
  CAF_CHECK_EQUAL(yaml::unknown("value", "db", {"database", "cache"}),
                  std::string{"unknown value 'db' (expected one of database, cache)"});
}

// Bad input of each kind, in each kind of file, gets an error that starts FILE:LINE:COL and names
// the field (the config, policy and topology loaders are one reader, so are scenarios and the
// knowledge base).
CAF_TEST(every file kind names file line and column for every kind of bad input) {
  struct loader {
    const char* name;
    std::string (*load)(const std::string& text);
  };
  const loader loaders[] = {
    {"config",
     [](const std::string& t) {
       auto r = config::load_string(t, "f.yaml");
       return r ? std::string{"(ok)"} : r.error().message;
     }},
    {"policy",
     [](const std::string& t) {
       auto r = config::load_policy_string(t, "f.yaml");
       return r ? std::string{"(ok)"} : r.error().message;
     }},
    {"topology",
     [](const std::string& t) {
       auto r = config::load_topology_string(t, "f.yaml");
       return r ? std::string{"(ok)"} : r.error().message;
     }},
    {"scenario",
     [](const std::string& t) {
       auto r = plugins::sandbox::load_scenario_string(t, "f.yaml");
       return r ? std::string{"(ok)"} : r.error().message;
     }},
    {"knowledge base",
     [](const std::string& t) {
       auto r = plugins::reasoner::parse_knowledge_base(t, "f.yaml");
       return r ? std::string{"(ok)"} : r.error().message;
     }},
  };
  struct bad {
    const char* kind;
    const char* text[5]; // config, policy, topology, scenario, knowledge base
    const char* says;
  };
  const bad inputs[] = {
    {"syntax error",
     {"store: [\n", "mode: [\n", "nodes: [\n", "scenario: [\n", "failure_modes: [\n"},
     "not found"},
    {"wrong type",
     {"node_id: [a]\n", "mode: [a]\n", "heartbeat_ms: fast\n",
      "scenario: [a]\nworld: w\nalert: {name: A}\ngoal: g\nexpect: {detected: true}\n",
      "anomalies: {a: 1}\n"},
     "expected"},
    {"unknown key",
     {"lissten: x\n", "mdoe: review\n", "hearbeat_ms: 100\n", "scenarios: s\n", "anomalys: []\n"},
     "unknown key"},
    {"duplicate key",
     {"node_id: a\nnode_id: b\n", "mode: review\nmode: review\n", "cluster: a\ncluster: b\n",
      "scenario: a\nscenario: b\n", "version: 1\nversion: 1\n"},
     "duplicate key"},
  };
  const std::regex located{"^f\\.yaml:[0-9]+:[0-9]+: .+"};
  for (const auto& in : inputs)
    for (std::size_t i = 0; i < 5; ++i) {
      auto e = loaders[i].load(in.text[i]);
      CAF_MESSAGE(loaders[i].name << ", " << in.kind << ": " << e);
      CAF_CHECK(std::regex_match(e, located));
      CAF_CHECK(e.find(in.says) != std::string::npos);
    }
  // Missing required keys are found once the mapping has been read: at the mapping.
  CAF_CHECK_EQUAL(loaders[1].load("rules:\n  - effect: deny\n"),
                  std::string{"f.yaml:2:5: rules[0]: missing key 'id'"});
  CAF_CHECK_EQUAL(loaders[2].load("nodes:\n  - {http: h:1, cluster: h:2}\n"),
                  std::string{"f.yaml:2:5: nodes[0]: missing key 'id'"});
  CAF_CHECK_EQUAL(loaders[3].load("world: w\n"),
                  std::string{"f.yaml:1:1: (top level): missing required field 'scenario'"});
  CAF_CHECK_EQUAL(loaders[4].load("anomalies: []\n"),
                  std::string{"f.yaml:1:1: failure_modes: missing (expected a list)"});
  // The hint for a near miss comes from the one edit distance in every file kind that gives one.
  for (std::size_t i = 0; i < 4; ++i)
    CAF_CHECK(loaders[i].load(inputs[2].text[i]).find("(did you mean") != std::string::npos);
}

CAF_TEST(strings and keys that are not utf 8 are refused) {
  // Whatever a config holds goes out again as JSON, in logs and in messages.
  sreh::config::yaml::reader r{"cfg.yaml"};
  auto root = r.parse("name: \"ok\"\nbad: \"a\x93z\"\n");
  auto entries = r.pairs(root);
  CAF_CHECK_EQUAL(r.string(entries[0]), "ok");
  try {
    (void)r.string(entries[1]);
    CAF_FAIL("a string with the byte 0x93 was read");
  } catch (const sreh::config::yaml::load_error& e) {
    CAF_CHECK_EQUAL(e.message,
                    std::string{"cfg.yaml:2:6: bad: not valid UTF-8 (byte 0x93 at offset 1)"});
  }
  auto keys = r.parse("lab\xffl: 1\n");
  try {
    (void)r.pairs(keys);
    CAF_FAIL("a key with the byte 0xff was read");
  } catch (const sreh::config::yaml::load_error& e) {
    CAF_CHECK(e.message.find("a key is not valid UTF-8 (byte 0xff at offset 3)") !=
              std::string::npos);
  }
}
