#include "plugins/tools/sandbox/settings.hpp"

#include <fmt/format.h>

#include "config/node/sections.hpp"
#include "config/yaml/reader.hpp"
#include "plugins/sections.hpp"

namespace sreh::plugins {

namespace {

sandbox::settings read_settings(config::yaml::reader& r, const config::yaml::entry& section,
                                const config::section_context& ctx) {
  sandbox::settings out;
  for (const auto& e : r.entries(section, {"scenario", "time_scale", "call_delay_ms"})) {
    if (e.key == "scenario") {
      out.scenario = config::read_path(r, e, ctx.config_file);
    } else if (e.key == "call_delay_ms") {
      out.call_delay_ms = r.integer(e, 0, 60'000);
    } else {
      out.time_scale = r.number(e);
      if (out.time_scale < 0 || out.time_scale > 3600)
        r.fail(e, fmt::format("expected a number from 0 to 3600, got {}", out.time_scale));
    }
  }
  return out;
}

} // namespace

void register_sandbox_section(config::section_registry& r) {
  r.add<sandbox::settings>(read_settings);
}

} // namespace sreh::plugins
