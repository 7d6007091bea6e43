#pragma once
// `tools.shell:`, the node config's section of the allow-listed shell (docs/sre-tools.md): on
// when `commands` are listed. Registered by register_shell_section (plugins/sections.hpp).

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sreh::plugins::shell {

/// One allow-listed command: tool `shell.<name>` runs `argv` (argv[0] an absolute path; no
/// shell), plus at most `max_args` arguments of the call, each matching `arg_pattern`.
struct command {
  std::string name;
  std::vector<std::string> argv;
  std::string risk = "read_only"; // read_only | low | medium | high: what the policy sees
  std::int64_t max_args = 0;
  std::string arg_pattern = "^[A-Za-z0-9_.,:=/@+-]+$";
  std::int64_t timeout_ms = 10'000;
  std::string description;
};

struct settings {
  static constexpr std::string_view section = "tools.shell";
  std::vector<command> commands;
  std::int64_t max_output_bytes = 64 * 1024; // of stdout and of stderr each; the rest is cut
  /// The commands' whole environment: nothing of sreh's own (tokens, URLs) is passed on.
  std::vector<std::pair<std::string, std::string>> env = {{"PATH", "/usr/sbin:/usr/bin:/sbin:/bin"},
                                                          {"LANG", "C.UTF-8"}};
};

} // namespace sreh::plugins::shell
