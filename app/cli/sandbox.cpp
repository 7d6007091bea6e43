// `sreh sandbox reset`: puts a sandbox node's world back as its scenario has it (the fault in
// effect again, every action forgotten), so that the README's examples start from one state.
#include <cstdio>

#include "app/cli/commands.hpp"

namespace sreh::app::cli {

int sandbox(int argc, char** argv) {
  auto o = parse_options(argc, argv, {}, {"json"});
  if (!o)
    return exit_usage;
  if (o->positional.size() != 1 || o->positional[0] != "reset")
    return usage_error("sandbox takes one subcommand: reset");
  int code = exit_ok;
  net::http_response raw;
  auto doc = call(*o, "POST", "/sandbox/reset", code, "{}", {}, &raw);
  if (!doc)
    return code;
  if (o->flag("json")) {
    std::printf("%s\n", raw.body.c_str());
    return exit_ok;
  }
  auto st = make_style();
  std::printf("%s scenario '%s': %lld action(s) forgotten, its faults are in effect again\n",
              st.green("sandbox reset:").c_str(), str(*doc, "scenario").c_str(),
              static_cast<long long>(num(*doc, "forgotten_actions")));
  return exit_ok;
}

} // namespace sreh::app::cli
