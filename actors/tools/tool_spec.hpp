#pragma once
// A tool declared as data: what a toolset writes instead of a class per tool.

#include <chrono>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "actors/tools/tool.hpp"
#include "core/base/json.hpp"

namespace sreh::actors {

/// What a handler gets besides the arguments: the tool's name (for messages) and the call (its
/// raw arguments, idempotency key, run id and cancellation).
struct tool_context {
  const std::string& name;
  const tool_call& call;
};

/// One call: `args` is the call's arguments parsed as a JSON object (validated against the
/// schema by the kernel; "" reads as `{}`).
using tool_handler = std::function<tool_result(const rapidjson::Value& args, const tool_context&)>;

/// A tool as a toolset declares it: its metadata, its handler and the optional parts of the
/// `tool` interface it needs. `make_tool` turns it into a `tool`; a tool whose behaviour the
/// fields cannot say (a flow, a world step) implements `tool` itself.
///
/// Idempotence follows the risk: a read-only tool is re-run on recovery, any other is
/// reconciled. The handler and hooks are called on any thread, concurrently: state they share
/// is theirs to guard.
struct tool_spec {
  std::string name;
  std::string description;
  /// JSON schema of the arguments (tool::schema).
  std::string schema;
  risk_class risk = risk_class::read_only;
  /// Blocks (I/O, subprocess): runs on the tool pool.
  bool blocking = false;
  std::chrono::milliseconds timeout = std::chrono::seconds(30);
  /// The observations or remedy it offers (tool::provides).
  std::vector<obs::capability> provides{};
  tool_handler run{};

  // -- optional ----------------------------------------------------------------------------------

  /// tool::observe; none when unset.
  std::function<obs::observations(std::string_view args, std::string_view result)> observe{};
  /// tool::scope; the default (the first target-like argument) when unset.
  std::function<action_scope(std::string_view args)> scope{};
  /// tool::reconcile; "unknown" when unset.
  std::function<reconcile_result(std::string_view idempotency_key)> reconcile{};
  /// tool::compensate; the tool is compensable when it is set.
  std::function<tool_result(const tool_call& original)> compensate{};
};

/// `spec` as a tool. A call whose arguments are not a JSON object fails with
/// "<name>: <what is wrong>" before the handler runs.
[[nodiscard]] tool_ptr make_tool(tool_spec spec);

/// Adds each of `specs` to `out` as a tool.
void add_tools(tool_registry& out, std::vector<tool_spec> specs);

} // namespace sreh::actors
