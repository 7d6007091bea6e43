// The `sreh` binary: dispatches subcommands. The composition root of a node is serve.cpp.

#include <cstdio>
#include <cstring>
#include <string>

#include "cli_client.hpp"
#include "serve.hpp"

namespace {

constexpr const char* usage = R"(sreh — a durable SRE agent runtime

usage: sreh <command> [options]

node:
  serve [--config FILE] [--listen HOST:PORT] [--data-dir DIR]
                          run a node (embedded default: SQLite in ./data, 127.0.0.1:7070)
  config check FILE       validate a config file

client (talks to a node; --server HOST:PORT or $SREH_SERVER, default 127.0.0.1:7070):
  submit "GOAL" [--watch] submit a goal; --watch follows the run live
  runs [--state S]        list runs
  show RUN                a run and its steps
  watch RUN               follow a run's events as a timeline
  cancel RUN              cancel a run

  help                    this text
)";

} // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fputs(usage, stderr);
    return 2;
  }
  std::string cmd = argv[1];
  if (cmd == "help" || cmd == "--help" || cmd == "-h") {
    std::fputs(usage, stdout);
    return 0;
  }
  if (cmd == "serve")
    return sreh::app::serve_command(argc - 2, argv + 2);
  if (cmd == "config")
    return sreh::app::config_check_command(argc - 2, argv + 2);
  if (cmd == "submit" || cmd == "runs" || cmd == "show" || cmd == "watch" || cmd == "cancel")
    return sreh::app::run_client_command(cmd, argc - 2, argv + 2);
  std::fprintf(stderr, "sreh: unknown command '%s'\n\n%s", cmd.c_str(), usage);
  return 2;
}
