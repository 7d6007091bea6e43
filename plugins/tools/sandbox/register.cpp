#include "plugins/register.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cctype>

#include "core/base/shell_word.hpp"
#include "net/http/auth.hpp"
#include "net/http/routes/routes.hpp"
#include "plugins/tools/sandbox/scenario.hpp"
#include "plugins/tools/sandbox/settings.hpp"
#include "plugins/tools/sandbox/world.hpp"

namespace sreh::plugins {

namespace {

/// The banner's hint for a sandbox node: the scenario, its alert and the goal to submit.
std::string hint(const sandbox::scenario& sc) {
  std::string labels;
  if (!sc.alert.name.empty())
    labels += " --label " + shell_word("alert=" + sc.alert.name);
  for (auto& [k, v] : sc.alert.labels)
    labels += " --label " + shell_word(k + "=" + v);
  std::string summary;
  if (auto it = sc.alert.annotations.find("summary"); it != sc.alert.annotations.end())
    summary = ": " + it->second;
  return fmt::format("  sandbox: scenario '{}' ({}), alert {}{}\n"
                     "  try:  sreh submit {}{} --watch\n",
                     sc.id, sc.file, sc.alert.name.empty() ? "(none)" : sc.alert.name, summary,
                     shell_word(sc.goal), labels);
}

} // namespace

void register_sandbox(actors::toolset_registry& r) {
  r.add({"sandbox",
         [](const config::node_config& cfg, actors::tool_registry& out) -> expected<std::string> {
           const auto& s = cfg.section<sandbox::settings>();
           if (s.scenario.empty())
             return std::string{};
           auto sc = sandbox::load_scenario(s.scenario);
           if (!sc)
             return sreh::error{sc.error().code, "sandbox.scenario: " + sc.error().message};
           auto world = std::make_shared<sandbox::world>(std::move(*sc));
           world->call_delay_ms = s.call_delay_ms;
           sandbox::add_sandbox_tools(out, world);
           out.add_world_source(sandbox::make_world_source(world, s.time_scale));
           return hint(world->spec());
         }});
}

void register_sandbox_routes(std::vector<net::route_group>& routes) {
  routes.push_back([](net::router& r, net::server_context& ctx) {
    if (ctx.tools == nullptr)
      return;
    for (const auto& source : ctx.tools->world_sources()) {
      if (source->name() != "sandbox")
        continue;
      // A viewer's token, as for GET /metrics: `authorization: {credentials_file}` in the
      // scrape config.
      r.add("GET", "/sandbox/metrics", net::access::viewer,
            [source](const net::request&, net::responder s) {
              net::reply rep;
              rep.status = 200;
              rep.content_type = "text/plain; version=0.0.4; charset=utf-8";
              rep.body = source->exposition();
              s.send(std::move(rep));
            });
      auto world = sandbox::world_of(source);
      if (!world)
        continue;
      // `sreh sandbox reset`: the scenario's state again, its faults in effect (README, Try it).
      r.add("POST", "/sandbox/reset", net::access::operator_,
            [world](const net::request& req, net::responder s) {
              auto forgot = world->reset();
              spdlog::info("sandbox: reset by {}: scenario '{}' again, {} action(s) forgotten",
                           req.who.name, world->spec().id, forgot);
              rapidjson::StringBuffer buf;
              json::writer w{buf};
              w.StartObject();
              w.Key("reset");
              w.Bool(true);
              w.Key("scenario");
              w.String(world->spec().id.c_str());
              w.Key("forgotten_actions");
              w.Int64(forgot);
              w.EndObject();
              s.send(net::json_reply(200, {buf.GetString(), buf.GetSize()}));
            });
    }
  });
}

} // namespace sreh::plugins
