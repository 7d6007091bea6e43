#include "app/serve/eval_command.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "app/serve/plugins.hpp"
#include "app/serve/serve.hpp"
#include "core/base/logger.hpp"
#include "eval/evolve.hpp"
#include "eval/report.hpp"
#include "eval/runner.hpp"

namespace sreh::app {

namespace {

namespace ev = sreh::eval;

constexpr const char* eval_usage =
  "usage: sreh eval [--json FILE] [--markdown FILE] [--mode autonomous|review] [--kb FILE] "
  "[--config FILE] DIR|FILE...\n"
  "  --config FILE reasons with the model route of a node config (openai, anthropic, builtin, a\n"
  "  fallback chain) instead of the builtin reasoner; --kb then sets its builtin's knowledge "
  "base.\n"
  "  A DIR is searched recursively for scenario files (*.yaml with a top-level 'scenario:' key),\n"
  "  skipping folders named 'worlds'; they run in path order. A FILE runs as given.\n";

struct eval_args {
  std::string config_file;
  std::string json_file;
  std::string markdown_file;
  ev::eval_options opts;
  std::vector<std::string> paths;
};

int eval_usage_error(const std::string& what) {
  std::fprintf(stderr, "sreh eval: %s\n%s", what.c_str(), eval_usage);
  return 2;
}

/// Returns 0 when parsed, -1 after --help, else the exit code (2).
int parse_args(int argc, char** argv, eval_args& out) {
  for (int i = 0; i < argc; ++i) {
    std::string_view a = argv[i];
    auto value = [&](std::string& dst) {
      if (i + 1 >= argc)
        return false;
      dst = argv[++i];
      return true;
    };
    if (a == "--json" || a == "--markdown" || a == "--mode" || a == "--kb" || a == "--config") {
      auto& dst = a == "--json"       ? out.json_file
                  : a == "--markdown" ? out.markdown_file
                  : a == "--mode"     ? out.opts.mode
                  : a == "--config"   ? out.config_file
                                      : out.opts.kb;
      if (!value(dst))
        return eval_usage_error(fmt::format("{} needs a value", a));
    } else if (a == "-h" || a == "--help") {
      std::fputs(eval_usage, stdout);
      return -1;
    } else if (a.size() > 1 && a[0] == '-') {
      return eval_usage_error(fmt::format("unknown option '{}'", a));
    } else {
      out.paths.emplace_back(a);
    }
  }
  if (out.opts.mode != "autonomous" && out.opts.mode != "review")
    return eval_usage_error(
      fmt::format("--mode '{}' is not one of autonomous, review", out.opts.mode));
  if (out.paths.empty())
    return eval_usage_error("no scenario file or directory given");
  return 0;
}

void print_progress(std::size_t i, std::size_t n, const ev::scenario_score& s) {
  auto name = s.id.empty() ? s.file : s.id;
  std::fprintf(stderr, "[%zu/%zu] %-36s %s  %lld steps, %lld approvals, quality %s, %.0f ms\n", i,
               n, name.c_str(), s.passed ? "PASS" : "FAIL", static_cast<long long>(s.steps),
               static_cast<long long>(s.approvals_requested),
               s.quality ? std::to_string(s.quality->total).c_str() : "-", s.wall_ms);
  for (auto& f : s.failures)
    std::fprintf(stderr, "        %s\n", f.c_str());
}

bool write_file(const std::string& path, const std::string& text) {
  std::ofstream out{path, std::ios::trunc};
  out << text;
  out.flush();
  if (out)
    return true;
  std::fprintf(stderr, "sreh eval: cannot write %s\n", path.c_str());
  return false;
}

} // namespace

int eval_command(int argc, char** argv) {
  eval_args args;
  if (int code = parse_args(argc, argv, args))
    return code < 0 ? 0 : code;
  if (auto err = setup_logging("error", "text"))
    std::fprintf(stderr, "sreh eval: logging: %s\n", err.message.c_str());
  ev::suite_info info;
  info.mode = args.opts.mode;
  info.kb = args.opts.kb;
  if (!args.config_file.empty()) {
    // The config's model route, checked (and its route named) before any scenario runs.
    const auto regs = std::make_shared<const node_registries>(registries());
    auto cfg = load_node_config(args.config_file, {}, *regs);
    if (!cfg) {
      std::fprintf(stderr, "sreh eval: %s\n", cfg.error().message.c_str());
      return 2;
    }
    auto model = cfg->model;
    if (!args.opts.kb.empty())
      model.kb = args.opts.kb;
    auto first = regs->providers.make(model);
    if (!first) {
      std::fprintf(stderr, "sreh eval: %s: %s\n", args.config_file.c_str(),
                   first.error().message.c_str());
      return 2;
    }
    info.route = (*first)->name();
    info.config = args.config_file;
    args.opts.make_provider = [regs, model]() { return regs->providers.make(model); };
  }
  std::vector<std::string> empty;
  auto files = ev::scenario_files(args.paths, &empty);
  for (const auto& p : empty)
    std::fprintf(stderr, "sreh eval: %s: no scenario files (*.yaml with a 'scenario:' key)\n",
                 p.c_str());
  if (files.empty())
    return eval_usage_error("no scenario files found");
  std::fprintf(stderr, "sreh eval: %zu scenario(s), mode %s, model route %s, knowledge base %s\n",
               files.size(), args.opts.mode.c_str(), info.route.c_str(),
               args.opts.kb.empty() ? "<embedded>" : args.opts.kb.c_str());
  std::vector<ev::scenario_score> rows;
  for (std::size_t i = 0; i < files.size(); ++i) {
    rows.push_back(ev::run_scenario_file(files[i], args.opts));
    print_progress(i + 1, files.size(), rows.back());
  }
  auto table = ev::suite_markdown(rows);
  auto totals = ev::totals_of(rows);
  std::fputs(table.c_str(), stdout);
  std::printf("\n%lld of %lld passed; median wall time per scenario %.0f ms (total %.1f s)\n",
              static_cast<long long>(totals.passed), static_cast<long long>(totals.scenarios),
              totals.median_wall_ms, totals.total_wall_ms / 1000);
  std::fflush(stdout);
  bool written = true;
  if (!args.json_file.empty())
    written = write_file(args.json_file, ev::suite_json(rows, info)) && written;
  if (!args.markdown_file.empty())
    written = write_file(args.markdown_file, table) && written;
  return written && totals.passed == totals.scenarios ? 0 : 1;
}

} // namespace sreh::app
