#pragma once
// `sandbox:`, the node config's section of the sandbox world the node's tools act on
// (docs/scenarios.md): registered by register_sandbox_section (plugins/sections.hpp).

#include <string>
#include <string_view>

namespace sreh::plugins::sandbox {

struct settings {
  static constexpr std::string_view section = "sandbox";
  /// A scenario file; its world and faults become the sandbox tools' world. Relative to the
  /// config file's directory. "" = no sandbox tools.
  std::string scenario;
  /// Simulated seconds that pass per wall second while the node serves (`time_scale`), on top
  /// of the 30 s each tool call costs; 0 = time moves only with tool calls, as in `sreh eval`.
  double time_scale = 0;
  /// Wall milliseconds each sandbox tool call takes (`call_delay_ms`, 0..60000): a run then
  /// works long enough to be watched, steered or crashed mid-way. 0 = at once.
  std::int64_t call_delay_ms = 0;
};

} // namespace sreh::plugins::sandbox
