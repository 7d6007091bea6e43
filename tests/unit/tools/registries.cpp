#define CAF_SUITE registries
#include <caf/test/unit_test.hpp>
#include <fmt/format.h>

#include "actors/gateway/provider_registry.hpp"
#include "actors/gateway/scripted_provider.hpp"
#include "actors/tools/tool_spec.hpp"
#include "actors/tools/toolset_registry.hpp"
#include "app/serve/plugins.hpp"

using namespace sreh;

CAF_TEST(an unknown model provider is an error naming the ones the build offers) {
  actors::provider_registry r;
  r.add("scripted", [](const config::model_config& m) {
    return expected<actors::model_provider_ptr>{
      std::make_shared<actors::scripted_provider>(m.script)};
  });
  config::model_config m;
  m.provider = "scripted";
  auto ok = r.make(m);
  CAF_REQUIRE(ok.has_value());
  CAF_CHECK_EQUAL((*ok)->name(), std::string{"scripted"});
  m.provider = "gpt-17";
  auto bad = r.make(m);
  CAF_REQUIRE(!bad.has_value());
  CAF_CHECK_EQUAL(bad.error().code, errc::invalid_argument);
  CAF_CHECK(bad.error().message.find("'gpt-17'") != std::string::npos);
  CAF_CHECK(bad.error().message.find("known: scripted") != std::string::npos);
}

CAF_TEST(toolsets install only what the config asks for and stop at the first error) {
  actors::toolset_registry r;
  int installed = 0;
  r.add({"quiet", [&](const config::node_config&, actors::tool_registry&) {
           ++installed;
           return expected<std::string>{std::string{}};
         }});
  r.add({"loud", [&](const config::node_config& cfg, actors::tool_registry&) {
           ++installed;
           if (cfg.node_id == "bad")
             return expected<std::string>{sreh::error{errc::invalid_argument, "loud.x: wrong"}};
           return expected<std::string>{std::string{"loud is on\n"}};
         }});
  config::node_config cfg;
  actors::tool_registry tools;
  auto banner = r.install(cfg, tools);
  CAF_REQUIRE(banner.has_value());
  CAF_CHECK_EQUAL(banner->size(), 1u);
  CAF_CHECK_EQUAL(installed, 2);
  cfg.node_id = "bad";
  auto err = r.install(cfg, tools);
  CAF_REQUIRE(!err.has_value());
  CAF_CHECK_EQUAL(err.error().message, std::string{"loud.x: wrong"});
}

CAF_TEST(a default node config registers no test tools and the testkit flag does) {
  auto regs = app::registries();
  config::node_config cfg;
  actors::tool_registry plain;
  auto p = app::make_tools_and_provider(regs, cfg, plain);
  CAF_REQUIRE(p.has_value());
  CAF_CHECK(plain.find("test.echo") == nullptr);
  CAF_CHECK_EQUAL((*p).provider->name(), std::string{"builtin"});
  cfg.tools.testkit = true;
  actors::tool_registry with;
  CAF_REQUIRE(app::make_tools_and_provider(regs, cfg, with).has_value());
  CAF_CHECK(with.find("test.echo") != nullptr);
  CAF_CHECK(with.find("test.record") != nullptr);
}

CAF_TEST(a declared tool reads the arguments the kernel parsed and checked) {
  int runs = 0;
  auto t = actors::make_tool(
    {.name = "t.count",
     .description = "Counts.",
     .schema = R"({"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]})",
     .run = [&runs](const rapidjson::Value& args, const actors::tool_context&) {
       ++runs;
       return actors::tool_result::success(fmt::format(R"({{"n":{}}})", args["n"].GetInt64()));
     }});
  auto bad = t->parse_args(R"({"n":"x"})");
  CAF_REQUIRE(!bad);
  CAF_CHECK(bad.error().message.find("n") != std::string::npos);
  auto broken = t->parse_args("{");
  CAF_REQUIRE(!broken);
  CAF_CHECK(broken.error().message.rfind("arguments: ", 0) == 0);
  auto ok = t->parse_args(R"({"n":7})");
  CAF_REQUIRE(ok);
  // The call's text says 1 and its parse says 7: the tool reads the parse.
  actors::tool_call call{"run_1", R"({"n":1})", "run_1:1", {}, *ok};
  CAF_CHECK_EQUAL(t->execute(call).result, std::string{R"({"n":7})"});
  call.parsed = nullptr; // not parsed by the kernel: the tool parses the text
  CAF_CHECK_EQUAL(t->execute(call).result, std::string{R"({"n":1})"});
  CAF_CHECK_EQUAL(runs, 2);
  auto unparsable =
    actors::make_tool({.name = "t.broken",
                       .description = "A schema that is not JSON.",
                       .schema = "{",
                       .run = [](const rapidjson::Value&, const actors::tool_context&) {
                         return actors::tool_result::success("{}");
                       }});
  auto internal = unparsable->parse_args("{}");
  CAF_REQUIRE(!internal);
  CAF_CHECK(internal.error().code == errc::internal);
}
