#pragma once
// Private: the shape every sandbox tool shares, and JSON helpers for their results.

#include <functional>
#include <string>
#include <vector>

#include "core/base/json.hpp"
#include "plugins/tools/sandbox/contract.hpp"
#include "plugins/tools/sandbox/state.hpp"

namespace sreh::plugins::sandbox::detail {

/// Runs one call on the world: `args` was validated against the tool's schema by the kernel
/// (and is parsed again here); returns the result JSON or an error naming the argument.
using tool_handler = std::function<expected<std::string>(world& w, const rapidjson::Value& args,
                                                         const std::string& key)>;

/// A sandbox tool: metadata plus a handler (actors/tools/tool_spec.hpp). Every call advances the
/// world's clock by `seconds_per_call`. Mutating tools (risk above read_only) reconcile from the
/// action log. What it provides and observes is its contract (contract.hpp), looked up by its
/// name.
[[nodiscard]] actors::tool_ptr sandbox_tool(std::string name, std::string description,
                                            std::string schema, actors::risk_class risk,
                                            world_ptr w, tool_handler handler);

/// Writes a JSON array of strings.
void write_names(json::writer& out, const std::vector<std::string>& xs);
/// Writes a metric map as an object (integral counters as integers).
void write_metrics(json::writer& out, const metric_map& m);
/// The string member `key` of `args`, or `fallback`.
[[nodiscard]] std::string string_arg(const rapidjson::Value& args, const char* key,
                                     std::string fallback = {});
/// A window argument ("30m") in seconds, within (0, max].
[[nodiscard]] expected<std::int64_t> window_arg(const rapidjson::Value& args, std::int64_t fallback,
                                                std::int64_t max);

void add_read_tools(actors::tool_registry& reg, const world_ptr& w);
void add_observe_tools(actors::tool_registry& reg, const world_ptr& w);
void add_write_tools(actors::tool_registry& reg, const world_ptr& w);

} // namespace sreh::plugins::sandbox::detail
