#pragma once
// `world.get`: world state as a read-only tool, so that any reasoner (and the context a model
// gateway assembles) reads the graph the done-criteria are judged on: entities with their
// metrics, properties and dependencies, filtered by id or kind.

#include <memory>

#include "actors/runtime/world_view.hpp"
#include "actors/tools/tool.hpp"

namespace sreh::actors {

/// The tool over `world` (the world sync's current graph; empty until its first observation).
[[nodiscard]] tool_ptr make_world_tool(std::shared_ptr<const world_view> world);

} // namespace sreh::actors
