#pragma once
// What `sreh serve` prints on stderr once it serves: where, and commands to try that work as
// printed (pasted into another terminal): this binary's path when `sreh` is not on PATH, the
// token header for curl, the server and token settings when they are not the CLI's defaults.

#include <cstdint>
#include <string>

namespace sreh::app {

/// How a shell in the working directory runs this binary: `sreh` when the `sreh` on PATH is
/// this binary, else its path (relative to the working directory when it lies under it).
[[nodiscard]] std::string cli_command();

struct banner_facts {
  std::string scheme; // http | https
  std::string host;
  std::uint16_t port = 0;
  std::string store_path;
  /// The toolsets' lines (app/serve/plugins.hpp); a `  try:  sreh …` line among them is
  /// printed with `cli_command()` in place of `sreh`.
  std::string toolset_lines;
  bool auth_on = true;
  std::string admin_token_file; // the generated admin token ("" with configured tokens)
};

/// The banner: the address, a `cd` to the working directory (the paths are relative to it),
/// the settings the CLI needs beyond its defaults (`export SREH_SERVER=…`, `SREH_TOKEN`), the
/// toolsets' hints and a `runs` and a `curl` command with the token header.
[[nodiscard]] std::string start_banner(const banner_facts& f);

} // namespace sreh::app
