#include "plugins/sre/probe/settings.hpp"

#include <fmt/format.h>

#include "config/node/sections.hpp"
#include "config/yaml/reader.hpp"
#include "plugins/sections.hpp"

namespace sreh::plugins {

namespace {

http_probe::settings read_settings(config::yaml::reader& r, const config::yaml::entry& section,
                                   const config::section_context&) {
  http_probe::settings out;
  for (const auto& e : r.entries(section, {"allow", "timeout_ms", "max_body_bytes"})) {
    if (e.key == "timeout_ms") {
      out.timeout_ms = r.integer(e, 1, 600'000);
    } else if (e.key == "max_body_bytes") {
      out.max_body_bytes = r.integer(e, 0, 16 << 20);
    } else {
      for (const auto& x : r.items(e)) {
        auto host = r.non_empty_string(x);
        auto name = host.rfind("*.", 0) == 0 ? host.substr(2) : host;
        if (name.empty() || name.find_first_of(" */:@?#") != std::string::npos)
          r.fail(x, fmt::format("'{}' is not a host name or *.domain", host));
        out.allow.push_back(std::move(host));
      }
    }
  }
  return out;
}

} // namespace

void register_http_probe_section(config::section_registry& r) {
  r.add<http_probe::settings>(read_settings);
}

} // namespace sreh::plugins
