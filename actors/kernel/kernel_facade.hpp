#pragma once
// The kernel's thread-safe facade on a node (kernel_api, for the HTTP front and the CLI): a
// request goes to this node's kernel or, in a cluster, a new run to the node placement picks and
// a request about a run to the kernel of the node that owns it.

#include <memory>
#include <string>

#include "actors/kernel/kernel_api.hpp"
#include "actors/kernel/messages.hpp"
#include "actors/runtime/runtime.hpp"

namespace sreh::actors {

/// The requests a kernel answers for the other members of a cluster too (their peer actors
/// forward them to it).
using run_requests_actor =
  caf::typed_actor<caf::replies_to<submit_atom, goal_request>::with<kernel_reply>,
                   caf::replies_to<cancel_atom, std::string, std::string>::with<kernel_reply>,
                   caf::replies_to<decide_atom, std::string, approval_vote>::with<kernel_reply>,
                   caf::replies_to<say_atom, conversation::message>::with<kernel_reply>>;

/// The cluster as the facade routes by it (actors/cluster's membership is one). Thread-safe.
class run_routing {
 public:
  virtual ~run_routing() = default;
  /// The node a new run goes to (this node on ties and when alone).
  [[nodiscard]] virtual std::string place() = 0;
  /// The requests actor of a linked member; null when not linked (or for this node).
  [[nodiscard]] virtual run_requests_actor kernel_of(const std::string& node_id) const = 0;
  [[nodiscard]] virtual const std::string& self_id() const = 0;
  [[nodiscard]] virtual bool self_is_worker() const = 0;
  /// Whether the member's lease is current.
  [[nodiscard]] virtual bool alive(const std::string& node_id) const = 0;
  [[nodiscard]] virtual cluster_view view() const = 0;
};

class kernel_facade : public kernel_api {
 public:
  /// The node stops: requests from now on answer "unavailable".
  virtual void reset() = 0;
};

/// The facade of the kernel supervised by `sup`; `cluster` is null on a single node.
[[nodiscard]] std::unique_ptr<kernel_facade>
make_kernel_facade(caf::actor_system& sys, kernel_actor sup, runtime_ptr rt, run_routing* cluster);

} // namespace sreh::actors
