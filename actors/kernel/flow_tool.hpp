#pragma once
// `flow.run`: the reasoner (or a Work) starts one of the node's flows as an action, subject to
// policy like any mutating tool (docs/flows.md, "Starting a flow from a run").

#include <atomic>
#include <memory>

#include "actors/kernel/kernel_api.hpp"
#include "actors/tools/tool.hpp"
#include "config/node/node_config.hpp"
#include "persistence/store/run_store.hpp"

namespace sreh::actors {

/// The kernel flow.run submits to, set once the node has started (the tool is registered
/// before the node exists).
struct flow_kernel {
  std::atomic<kernel_api*> kernel{nullptr};
};

/// `flow.run {"flow": NAME, "inputs": {...}}` starts a run of flow NAME of `cfg.flows` with the
/// tool call's idempotency key (a retried or recovered action starts it once), the calling run
/// as its parent. It answers once the run exists: `{"run", "flow", "state"}`; it does not wait
/// for the flow to end. Unknown flows and bad inputs fail naming them.
[[nodiscard]] tool_ptr make_flow_tool(const config::node_config& cfg, persistence::run_store& store,
                                      std::shared_ptr<flow_kernel> kernel);

} // namespace sreh::actors
