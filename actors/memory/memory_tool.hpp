#pragma once
// `memory.search`: long-term memory as a read-only tool (docs/memory.md, "In reasoning"). A run
// recalls through it before its first step — the kernel finds it by its `recall` capability and
// journals the call as the run's first step when it finds anything — and a model may call it
// mid-run to ask for more. Its result reads back as `past_cases` (core/model/observation.hpp),
// the one way a reasoner sees what memory holds.

#include <cstddef>
#include <memory>

#include "actors/memory/memory_service.hpp"
#include "actors/tools/tool.hpp"

namespace sreh::actors {

/// Where the tool finds the node's memory: set once the node is up (the tools are made before
/// it). Until then, and without a node, a call fails naming why.
struct memory_link {
  memory_service* service = nullptr;
};

/// Each memory's text in a result is cut at this many bytes (`"truncated": true`): a run's step
/// holds what the reasoner was shown, and five postmortems of 64 KiB would not fit one.
inline constexpr std::size_t recalled_text_bytes = 2048;
/// The most memories one call returns.
inline constexpr int max_recalled = 10;

[[nodiscard]] tool_ptr make_memory_tool(std::shared_ptr<const memory_link> link);

} // namespace sreh::actors
