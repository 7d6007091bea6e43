#pragma once
// The evolution gate of a serving node (docs/evolve.md): the versions its runs pin, and the
// candidate service whose evaluator runs the scenario suites and replays under a candidate.

#include <memory>

#include "actors/evolve/candidate_service.hpp"
#include "actors/evolve/versions.hpp"
#include "app/serve/plugins.hpp"
#include "config/node/node_config.hpp"
#include "core/policy/policy.hpp"
#include "net/node/node_parts.hpp"

namespace sreh::app {

/// The node's versions: the config's model section, provider and policy, the reasoners of the
/// other versions made by the plugins' providers (`regs` must outlive it).
[[nodiscard]] std::shared_ptr<actors::version_registry>
make_versions(const node_registries& regs, const config::node_config& cfg,
              actors::model_provider_ptr provider, policy::policy_set policy);

/// The candidate service over node `n`, loaded (its promoted versions current again), its
/// evaluator supervised by the node, and following the promotions other nodes announce. `regs`
/// and `cfg` must outlive it.
[[nodiscard]] expected<std::unique_ptr<actors::candidate_service>>
start_gate(net::node_parts& n, const node_registries& regs, const config::node_config& cfg,
           std::shared_ptr<actors::version_registry> versions);

} // namespace sreh::app
