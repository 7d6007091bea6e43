#include "app/serve/banner.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <string_view>
#include <system_error>

#include "core/base/shell_word.hpp"

namespace sreh::app {

namespace {

namespace fs = std::filesystem;

/// The CLI's defaults (app/cli/http.cpp): the server and the token file it reads.
constexpr std::string_view default_server = "127.0.0.1:7070";
constexpr const char* default_token_file = "./data/admin.token";

bool same_file(const fs::path& a, const fs::path& b) {
  std::error_code ec;
  return fs::equivalent(a, b, ec) && !ec;
}

/// The `sreh` that PATH finds, or "" when none.
fs::path sreh_on_path() {
  const char* path = std::getenv("PATH");
  std::string_view rest = path == nullptr ? "" : path;
  while (!rest.empty()) {
    auto colon = rest.find(':');
    auto dir = rest.substr(0, colon);
    rest = colon == std::string_view::npos ? "" : rest.substr(colon + 1);
    if (dir.empty())
      continue;
    auto candidate = fs::path{dir} / "sreh";
    std::error_code ec;
    if (fs::is_regular_file(candidate, ec) && ::access(candidate.c_str(), X_OK) == 0)
      return candidate;
  }
  return {};
}

/// The toolsets' lines with `cli` in place of the `sreh` of their `try:` commands.
std::string with_cli(const std::string& lines, const std::string& cli) {
  constexpr std::string_view prefix = "try:  sreh ";
  std::string out = lines;
  for (auto at = out.find(prefix); at != std::string::npos;
       at = out.find(prefix, at + 6 + cli.size()))
    out.replace(at + 6, 4, cli); // after "try:  ", the 4 letters of sreh
  return out;
}

} // namespace

std::string cli_command() {
  std::error_code ec;
  auto self = fs::read_symlink("/proc/self/exe", ec);
  if (ec)
    return "sreh";
  if (auto found = sreh_on_path(); !found.empty() && same_file(found, self))
    return "sreh";
  auto cwd = fs::current_path(ec);
  if (!ec) {
    auto rel = self.lexically_relative(cwd);
    if (!rel.empty() && *rel.begin() != "..")
      return shell_word(rel.string());
  }
  return shell_word(self.string());
}

std::string start_banner(const banner_facts& f) {
  const auto cli = cli_command();
  const auto url = fmt::format("{}://{}:{}", f.scheme, f.host, f.port);
  std::error_code ec;
  auto cwd = fs::current_path(ec);
  std::string out = fmt::format("\n  sreh is up: {}   (Ctrl-C stops it; runs are durable in {})\n",
                                url, f.store_path);
  out += fmt::format("  in another terminal:  cd {}\n", shell_word(ec ? "." : cwd.string()));
  std::string exports;
  if (f.scheme != "http" || fmt::format("{}:{}", f.host, f.port) != default_server)
    exports += " SREH_SERVER=" + url;
  std::string header;
  if (f.auth_on && f.admin_token_file.empty()) {
    exports += " SREH_TOKEN=YOUR_TOKEN";
    header = "-H \"Authorization: Bearer $SREH_TOKEN\" ";
  } else if (f.auth_on) {
    if (!same_file(f.admin_token_file, default_token_file))
      exports += " SREH_TOKEN=$(cat " + shell_word(f.admin_token_file) + ")";
    header = "-H \"Authorization: Bearer $(cat " + shell_word(f.admin_token_file) + ")\" ";
  }
  if (!exports.empty())
    out += "                        export" + exports + "\n";
  if (f.scheme == "https")
    out += "                        (and SREH_CA_FILE=CA.pem, curl --cacert CA.pem, when a "
           "private CA signed the node's certificate)\n";
  out += f.toolset_lines.empty()
           ? fmt::format("  try:  {} submit \"checkout is failing - find out why and fix it\" "
                         "--watch\n",
                         cli)
           : with_cli(f.toolset_lines, cli);
  out += fmt::format("        {} runs\n        curl -N {}{}/v1/events\n\n", cli, header, url);
  return out;
}

} // namespace sreh::app
