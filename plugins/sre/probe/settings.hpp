#pragma once
// `tools.http_probe:`, the node config's section of http.probe (docs/sre-tools.md): on when
// `allow` names hosts. Registered by register_http_probe_section (plugins/sections.hpp).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sreh::plugins::http_probe {

struct settings {
  static constexpr std::string_view section = "tools.http_probe";
  /// Hosts a probe may reach: exact names, or `*.suffix` for a domain's hosts; none = no tool.
  std::vector<std::string> allow;
  std::int64_t timeout_ms = 5'000;
  std::int64_t max_body_bytes = 64 * 1024; // of a response the probe reads and matches
};

} // namespace sreh::plugins::http_probe
