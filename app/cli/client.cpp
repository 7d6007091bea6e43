// The client subcommands: thin HTTP/SSE clients of a node's REST API with readable output.
// Dispatch only; the commands live in cli_runs.cpp, cli_watch.cpp, cli_approvals.cpp and
// cli_cluster.cpp, the shared request/token/problem code in cli_http.cpp.
#include "app/cli/client.hpp"

#include <cstdio>

#include "app/cli/commands.hpp"

namespace sreh::app {

int run_client_command(const std::string& cmd, int argc, char** argv) {
  using namespace cli;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::fputs(usage_text, stdout);
      return exit_ok;
    }
  }
  if (cmd == "submit")
    return submit(argc, argv);
  if (cmd == "runs")
    return runs(argc, argv);
  if (cmd == "show")
    return show(argc, argv);
  if (cmd == "postmortem")
    return postmortem(argc, argv);
  if (cmd == "watch")
    return watch(argc, argv);
  if (cmd == "cancel")
    return cancel(argc, argv);
  if (cmd == "say")
    return say(argc, argv);
  if (cmd == "follow-up")
    return follow_up(argc, argv);
  if (cmd == "fork")
    return fork(argc, argv);
  if (cmd == "compare")
    return compare(argc, argv);
  if (cmd == "approvals")
    return approvals(argc, argv);
  if (cmd == "notifications")
    return notifications(argc, argv);
  if (cmd == "approve")
    return decide(true, argc, argv);
  if (cmd == "deny")
    return decide(false, argc, argv);
  if (cmd == "nodes")
    return nodes(argc, argv);
  if (cmd == "tools")
    return tools(argc, argv);
  if (cmd == "models")
    return models(argc, argv);
  if (cmd == "templates")
    return templates(argc, argv);
  if (cmd == "flows")
    return flows(argc, argv);
  if (cmd == "flow")
    return flow(argc, argv);
  if (cmd == "works")
    return works(argc, argv);
  if (cmd == "work")
    return work(argc, argv);
  if (cmd == "sandbox")
    return sandbox(argc, argv);
  if (cmd == "memory")
    return memory(argc, argv);
  if (cmd == "evolve")
    return evolve(argc, argv);
  return usage_error("unknown command '" + cmd + "'");
}

} // namespace sreh::app
