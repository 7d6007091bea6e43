#pragma once
// The cluster peer's interface: what the members of a cluster send each other through the
// middleman, and every message type that crosses it. Private to the actors module.

#include <caf/all.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "actors/kernel/messages.hpp"
#include "actors/runtime/runtime.hpp"
#include "config/topology/topology.hpp"

namespace sreh::actors {

/// A member's load, pushed to each linked peer every heartbeat (fresher than the store's).
struct peer_load {
  std::string node_id;
  std::int64_t active_runs = 0; // run actors alive
  std::int64_t parked_runs = 0; // runs waiting for a decision
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, peer_load& x) {
  return f(caf::meta::type_name("sreh::peer_load"), x.node_id, x.active_runs, x.parked_runs);
}

/// A person's command on a Work (works::work_command) sent to the member that owns the Work:
/// (forward, work id, command, by, text).
using forward_atom = caf::atom_constant<caf::atom("forward")>;

/// How the owner answered a forwarded Works command: its error, or none when it was applied (and
/// committed: the sender reads the Work from the store the members share).
struct forwarded_reply {
  sreh::error err;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, forwarded_reply& x) {
  return f(caf::meta::type_name("sreh::forwarded_reply"), x.err);
}

/// The peer actor of a member, published on its cluster port. Other members hand it the run
/// requests that belong to this node (it delegates them to the kernel, whose replies go back
/// unchanged) and the commands on Works this node owns (to its orchestrator), and push their
/// load to it.
using peer_actor =
  caf::typed_actor<caf::replies_to<submit_atom, goal_request>::with<kernel_reply>,
                   caf::replies_to<cancel_atom, std::string, std::string>::with<kernel_reply>,
                   caf::replies_to<decide_atom, std::string, approval_vote>::with<kernel_reply>,
                   caf::replies_to<say_atom, conversation::message>::with<kernel_reply>,
                   caf::replies_to<forward_atom, std::string, std::int32_t, std::string,
                                   std::string>::with<forwarded_reply>,
                   caf::reacts_to<load_atom, peer_load>>;

class cluster_member;

/// Spawns the peer actor of `member` (cluster.cpp publishes it): links to the `others` every
/// `every` (connecting with `timeout`), pushes this node's load, and delegates the requests
/// other members forward to `sup`, this node's kernel.
[[nodiscard]] peer_actor spawn_peer(caf::actor_system& sys, cluster_member* member, runtime_ptr rt,
                                    kernel_actor sup, std::vector<config::cluster_member> others,
                                    std::chrono::milliseconds every,
                                    std::chrono::milliseconds timeout);

/// Registers every type in `peer_actor`'s messages with the names its inspect() gives. Every
/// member calls it before its actor system starts: a type one side has not registered arrives
/// as an empty message, and the interfaces the two sides compare when they link differ.
void add_peer_message_types(caf::actor_system_config& cfg);

} // namespace sreh::actors
