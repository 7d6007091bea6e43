#include "plugins/sre/shell/settings.hpp"

#include <fmt/format.h>

#include <regex>

#include "config/node/sections.hpp"
#include "config/yaml/reader.hpp"
#include "plugins/sections.hpp"

namespace sreh::plugins {

namespace {

using config::yaml::entry;
using config::yaml::reader;

shell::command read_command(reader& r, const entry& e) {
  shell::command c;
  auto entries =
    r.entries(e, {"name", "argv", "risk", "max_args", "arg_pattern", "timeout_ms", "description"});
  for (const auto& x : entries) {
    if (x.key == "name") {
      c.name = r.non_empty_string(x);
      if (c.name.size() > 48 ||
          c.name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-_") != std::string::npos)
        r.fail(x, "expected 1-48 characters of a-z, 0-9, '-' and '_' (the tool is shell.NAME)");
    } else if (x.key == "argv") {
      for (const auto& a : r.non_empty_items(x))
        c.argv.push_back(r.non_empty_string(a));
      if (c.argv.front().front() != '/')
        r.fail(
          x, fmt::format("argv[0] '{}' must be an absolute path (no PATH search)", c.argv.front()));
    } else if (x.key == "risk") {
      c.risk = r.one_of(x, {"read_only", "low", "medium", "high"});
    } else if (x.key == "max_args") {
      c.max_args = r.integer(x, 0, 64);
    } else if (x.key == "arg_pattern") {
      c.arg_pattern = r.non_empty_string(x);
      try {
        std::regex{c.arg_pattern, std::regex::ECMAScript};
      } catch (const std::regex_error& err) {
        r.fail(x, fmt::format("'{}' is not a regular expression: {}", c.arg_pattern, err.what()));
      }
    } else if (x.key == "timeout_ms") {
      c.timeout_ms = r.integer(x, 1, 3'600'000);
    } else {
      c.description = r.string(x);
    }
  }
  if (c.name.empty() || c.argv.empty())
    r.fail(e, "a command needs 'name' and 'argv'");
  return c;
}

shell::settings read_settings(reader& r, const entry& section, const config::section_context&) {
  shell::settings out;
  for (const auto& e : r.entries(section, {"commands", "max_output_bytes", "env"})) {
    if (e.key == "commands") {
      for (const auto& x : r.items(e)) {
        auto c = read_command(r, x);
        for (const auto& other : out.commands)
          if (other.name == c.name)
            r.fail(x, fmt::format("command '{}' is listed twice", c.name));
        out.commands.push_back(std::move(c));
      }
    } else if (e.key == "max_output_bytes") {
      out.max_output_bytes = r.integer(e, 0, 16 << 20);
    } else {
      out.env.clear();
      for (const auto& p : r.pairs(e))
        out.env.emplace_back(p.key, r.string(p));
    }
  }
  return out;
}

} // namespace

void register_shell_section(config::section_registry& r) {
  r.add<shell::settings>(read_settings);
}

} // namespace sreh::plugins
