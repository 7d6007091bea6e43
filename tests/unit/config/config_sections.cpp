// A plugin's section of the node config (config/node/sections.hpp): read into the plugin's
// typed settings, its errors in the one format `FILE:LINE:COL: path: what`, its check run by
// finalize, its defaults when the file has none; a key no plugin registered is refused.
#define CAF_SUITE config_sections
#include <caf/test/unit_test.hpp>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "app/serve/plugins.hpp"
#include "config/node/node_config.hpp"
#include "config/node/sections.hpp"
#include "plugins/sre/alertmanager/settings.hpp"
#include "plugins/sre/shell/settings.hpp"

using namespace sreh;
using namespace sreh::config;

namespace {

/// A top-level section, as a plugin states it.
struct gauge_settings {
  static constexpr std::string_view section = "gauge";
  std::int64_t size = 3;
  std::string label = "plain";
};

/// A section under `tools:`.
struct dial_settings {
  static constexpr std::string_view section = "tools.dial";
  bool on = false;
  std::string file; // relative to the config file
};

gauge_settings read_gauge(yaml::reader& r, const yaml::entry& section, const section_context&) {
  gauge_settings out;
  for (const auto& e : r.entries(section, {"size", "label"})) {
    if (e.key == "size")
      out.size = r.integer(e, 1, 10);
    else
      out.label = r.non_empty_string(e);
  }
  return out;
}

dial_settings read_dial(yaml::reader& r, const yaml::entry& section, const section_context& ctx) {
  dial_settings out;
  for (const auto& e : r.entries(section, {"on", "file"})) {
    if (e.key == "on")
      out.on = r.boolean(e);
    else
      out.file = read_path(r, e, ctx.config_file);
  }
  return out;
}

/// A cross-field rule: the label must not be the node's id.
sreh::error check_gauge(const gauge_settings& g, const node_config& cfg) {
  if (g.label == cfg.node_id)
    return field_error("gauge.label", "must differ from node_id");
  return {};
}

const section_registry& test_sections() {
  static const auto r = [] {
    section_registry s;
    s.add<gauge_settings>(read_gauge, check_gauge);
    s.add<dial_settings>(read_dial);
    return s;
  }();
  return r;
}

expected<node_config> load(const std::string& text) {
  return load_string(text, "cfg.yaml", {}, nullptr, &test_sections());
}

/// The error of loading `text` as "cfg.yaml", or "(ok)".
std::string err(const std::string& text) {
  auto r = load(text);
  return r ? std::string{"(ok)"} : r.error().message;
}

} // namespace

CAF_TEST(a registered section is read into its typed settings) {
  const std::string dir = "/tmp/sreh_config_sections_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir + "/data");
  std::ofstream{dir + "/data/dial.txt"} << "x\n";
  std::ofstream{dir + "/sreh.yaml"} << "gauge:\n  size: 7\n  label: big\n"
                                       "tools:\n  testkit: true\n  dial: {on: true, file: "
                                       "data/dial.txt}\n";
  auto r = load_file(dir + "/sreh.yaml", {}, nullptr, &test_sections());
  CAF_REQUIRE(r.has_value());
  CAF_CHECK_EQUAL(r->section<gauge_settings>().size, 7);
  CAF_CHECK_EQUAL(r->section<gauge_settings>().label, "big");
  CAF_CHECK(r->section<dial_settings>().on);
  CAF_CHECK_EQUAL(r->section<dial_settings>().file, dir + "/data/dial.txt");
  CAF_CHECK(r->tools.testkit); // the tools section's own keys beside the plugin's
  CAF_CHECK_EQUAL(r->sections.size(), 2u);
  std::filesystem::remove_all(dir);
}

CAF_TEST(a section no plugin registered is refused naming the key) {
  CAF_CHECK_EQUAL(err("node_id: n\nguage: {size: 2}\n"),
                  "cfg.yaml:2:1: guage: unknown key 'guage' (did you mean 'gauge'?)");
  CAF_CHECK_EQUAL(err("tools:\n  dail: {on: true}\n"),
                  "cfg.yaml:2:3: tools.dail: unknown key 'dail' (did you mean 'dial'?)");
  // The plugins' keys follow the node's own in the list of what may be there.
  auto e = err("zzzzzzzz: 1\n");
  CAF_CHECK_EQUAL(e.rfind("cfg.yaml:1:1: zzzzzzzz: unknown key 'zzzzzzzz' (expected one of "
                          "node_id, listen,",
                          0),
                  0u);
  CAF_CHECK(e.ends_with(", tls, models, gauge)"));
  // Without the registry the section is no key of the node config.
  auto none = load_string("gauge: {size: 2}\n", "cfg.yaml");
  CAF_REQUIRE(!none.has_value());
  CAF_CHECK_EQUAL(none.error().message.rfind("cfg.yaml:1:1: gauge: unknown key 'gauge'", 0), 0u);
  auto no_tool = load_string("tools: {dial: {}}\n", "cfg.yaml");
  CAF_REQUIRE(!no_tool.has_value());
  CAF_CHECK_EQUAL(no_tool.error().message,
                  "cfg.yaml:1:9: tools.dial: unknown key 'dial' (expected one of testkit, "
                  "record_file, disable)");
}

CAF_TEST(a plugin section error keeps file line column and the field path) {
  CAF_CHECK_EQUAL(err("node_id: n\ngauge:\n  size: 70\n"),
                  "cfg.yaml:3:9: gauge.size: expected an integer between 1 and 10, got 70");
  CAF_CHECK_EQUAL(err("gauge:\n  lable: x\n"),
                  "cfg.yaml:2:3: gauge.lable: unknown key 'lable' (did you mean 'label'?)");
  CAF_CHECK_EQUAL(err("tools:\n  dial:\n    file: /nonexistent/dial.txt\n"),
                  "cfg.yaml:3:11: tools.dial.file: cannot read '/nonexistent/dial.txt': No such "
                  "file or directory");
  // The section's check runs in finalize and still points at the field in the file.
  CAF_CHECK_EQUAL(err("node_id: n1\ngauge:\n  label: n1\n"),
                  "cfg.yaml:3:10: gauge.label: must differ from node_id");
  // So does a real plugin's: the receiver's template must be one the node loaded.
  const auto regs = app::registries();
  auto am = load_string("alertmanager:\n  receiver:\n    template: nope\n", "cfg.yaml", {},
                        &regs.kinds, &regs.sections);
  CAF_REQUIRE(!am.has_value());
  CAF_CHECK_EQUAL(am.error().message, "cfg.yaml:3:15: alertmanager.receiver.template: no Work "
                                      "template 'nope' in works.templates");
}

CAF_TEST(an absent section yields the typed defaults) {
  auto r = load("node_id: n1\n");
  CAF_REQUIRE(r.has_value());
  CAF_CHECK(r->sections.empty());
  CAF_CHECK_EQUAL(r->section<gauge_settings>().size, 3);
  CAF_CHECK_EQUAL(r->section<gauge_settings>().label, "plain");
  CAF_CHECK(!r->section<dial_settings>().on);
  // The plugins' own, on a config loaded with them and on one built in code.
  const auto regs = app::registries();
  auto plain = load_string("", "cfg.yaml", {}, &regs.kinds, &regs.sections);
  CAF_REQUIRE(plain.has_value());
  CAF_CHECK(plain->section<plugins::shell::settings>().commands.empty());
  CAF_CHECK_EQUAL(plain->section<plugins::shell::settings>().env.size(), 2u);
  node_config built;
  CAF_CHECK_EQUAL(built.section<plugins::alertmanager::settings>().severity.at("critical"), "sev1");
  CAF_CHECK_EQUAL(built.section<plugins::alertmanager::settings>().max_alerts, 1000);
}

CAF_TEST(sections are listed under their parent in the order they were added) {
  section_registry s;
  s.add<gauge_settings>(read_gauge);
  s.add<dial_settings>(read_dial);
  s.add<gauge_settings>(read_gauge, check_gauge); // replaces the first
  CAF_CHECK_EQUAL(s.all().size(), 2u);
  CAF_CHECK(static_cast<bool>(s.find("gauge")->check));
  CAF_CHECK(s.find("dial") == nullptr);
  auto top = s.keys_under("");
  auto tools = s.keys_under("tools");
  CAF_REQUIRE_EQUAL(top.size(), 1u);
  CAF_CHECK_EQUAL(std::string{top[0]}, "gauge");
  CAF_REQUIRE_EQUAL(tools.size(), 1u);
  CAF_CHECK_EQUAL(std::string{tools[0]}, "dial");
}
