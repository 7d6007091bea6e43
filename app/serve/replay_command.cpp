#include "app/serve/replay_command.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "app/serve/plugins.hpp"
#include "app/serve/serve.hpp"
#include "config/policy/policy_config.hpp"
#include "core/base/logger.hpp"
#include "eval/replay.hpp"
#include "net/node/node_parts.hpp"

namespace sreh::app {

namespace {

constexpr const char* usage =
  "usage: sreh replay RUN [--config FILE] [--node-id ID] [--data-dir DIR] [--json]\n"
  "  Replays the finished run RUN from the store of the node FILE describes (the same config\n"
  "  `sreh serve` ran with), with its recorded model answers and tool results: no model server\n"
  "  is called and no tool acts; a flow run runs its pinned flow, its checks judged and its\n"
  "  waits ended as recorded. Prints each recorded step beside the replay's.\n"
  "  Exit: 0 same steps and end, 1 diverged, 2 usage, 3 cannot replay.\n";

int replay_usage_error(const std::string& what) {
  std::fprintf(stderr, "sreh replay: %s\n%s", what.c_str(), usage);
  return 2;
}

int cannot(const std::string& what) {
  std::fprintf(stderr, "sreh replay: %s\n", what.c_str());
  return 3;
}

/// The tools the recording called that `tools` does not offer, in the order first called.
std::vector<std::string> tools_not_offered(const eval::recording& rec,
                                           const actors::tool_registry& tools) {
  std::vector<std::string> out;
  for (const auto& s : rec.steps)
    if (s.kind == step_kind::tool && !s.tool.empty() && tools.find(s.tool) == nullptr &&
        std::find(out.begin(), out.end(), s.tool) == out.end())
      out.push_back(s.tool);
  return out;
}

/// After a divergence: why the config may be the cause (a missing --config runs the defaults,
/// which offer none of a sandbox's or an SRE toolset's tools).
void explain_divergence(const std::string& config_file, const std::vector<std::string>& missing) {
  auto given = config_file.empty()
                 ? std::string{"no --config was given, so it ran with the default config"}
                 : fmt::format("is {} the config the node served with?", config_file);
  if (!missing.empty())
    std::fprintf(stderr,
                 "sreh replay: the run called tools this replay's config does not offer "
                 "(%s): %s\n",
                 fmt::format("{}", fmt::join(missing, ", ")).c_str(), given.c_str());
  else if (config_file.empty())
    std::fprintf(stderr, "sreh replay: %s; a run recorded under another config diverges\n",
                 given.c_str());
  if (config_file.empty())
    std::fprintf(stderr, "  replay it with the node's config: sreh replay RUN --config FILE\n");
}

} // namespace

int replay_command(int argc, char** argv) {
  std::string run_id, config_file;
  config::overrides set;
  bool as_json = false;
  for (int i = 0; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a == "--config" || a == "--node-id" || a == "--data-dir") {
      if (i + 1 >= argc)
        return replay_usage_error(fmt::format("{} needs a value", a));
      auto& dst = a == "--config" ? config_file : a == "--node-id" ? set.node_id : set.data_dir;
      dst = argv[++i];
    } else if (a == "--json") {
      as_json = true;
    } else if (a == "-h" || a == "--help") {
      std::fputs(usage, stdout);
      return 0;
    } else if (a.size() > 1 && a[0] == '-') {
      return replay_usage_error(fmt::format("unknown option '{}'", a));
    } else if (run_id.empty()) {
      run_id = a;
    } else {
      return replay_usage_error(fmt::format("one run at a time ('{}' and '{}')", run_id, a));
    }
  }
  if (run_id.empty())
    return replay_usage_error("no run given");
  const auto regs = registries();
  auto cfg = load_node_config(config_file, set, regs);
  if (!cfg)
    return cannot(cfg.error().message);
  if (auto err = setup_logging("warn", cfg->logging.format))
    return cannot("logging: " + err.message);
  if (cfg->store.kind != "postgres" && !std::filesystem::exists(cfg->store.path))
    return cannot(fmt::format("no store at {} (the node's data dir is {}; give --config or "
                              "--data-dir)",
                              cfg->store.path, cfg->data_dir));
  expected<eval::recording> rec = [&]() -> expected<eval::recording> {
    auto store = net::open_store(cfg->store);
    if (!store)
      return store.error();
    return eval::load_recording(**store, run_id);
  }(); // the node's store is closed again before the replay starts
  if (!rec)
    return cannot(rec.error().message);
  auto tools = std::make_shared<actors::tool_registry>();
  auto plugins = make_tools_and_provider(regs, *cfg, *tools);
  if (!plugins)
    return cannot(plugins.error().message);
  auto policy = config::node_policy(*cfg);
  if (!policy)
    return cannot(policy.error().message);
  auto report = eval::replay(*rec, *cfg, tools, std::move(*policy), plugins->provider);
  if (!report)
    return cannot(report.error().message);
  auto text = as_json ? eval::render_json(*report) + "\n" : eval::render_text(*report);
  std::fputs(text.c_str(), stdout);
  if (report->same())
    return 0;
  explain_divergence(config_file, tools_not_offered(*rec, *tools));
  return 1;
}

} // namespace sreh::app
