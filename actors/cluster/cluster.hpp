#pragma once
// A node's membership in a cluster (docs/cluster.md): heartbeats and claims through the store, a
// published peer actor on the middleman port, links to the other members, and placement.

#include <caf/all.hpp>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "actors/cluster/peer.hpp"
#include "actors/kernel/cluster_view.hpp"
#include "actors/kernel/kernel_facade.hpp"
#include "actors/kernel/messages.hpp"
#include "actors/runtime/runtime.hpp"
#include "config/topology/topology.hpp"
#include "persistence/store/cluster_store.hpp"

namespace sreh::actors {

/// Loads the middleman with the topology's timeouts and registers the peer's message types
/// (add_peer_message_types); with the topology's `tls`, also CAF's OpenSSL module with the
/// certificate of `node_id`, so that its links are mutual TLS. Every member calls it before its
/// actor system starts.
void add_cluster_message_types(caf::actor_system_config& cfg, const config::topology& topo,
                               const std::string& node_id);

/// Membership of this node. `enter` heartbeats once, before the kernel recovers anything (so a
/// node that comes back never races a survivor that is claiming its runs); `open` publishes the
/// peer actor and starts the heartbeat thread; `leave` stops both.
///
/// Concurrency: `view`, `place` and `peer` are thread-safe (the HTTP front calls them); the
/// heartbeat thread and the peer actor update the shared state under a mutex.
class cluster_member final : public run_routing {
 public:
  cluster_member(caf::actor_system& sys, const config::topology& topo, runtime_ptr rt,
                 persistence::cluster_store& store);
  ~cluster_member();
  cluster_member(const cluster_member&) = delete;
  cluster_member& operator=(const cluster_member&) = delete;

  /// The first heartbeat, retried until the store answers (for up to one lease).
  [[nodiscard]] sreh::error enter();
  /// Publishes the peer actor on the cluster port and starts heartbeating and claiming.
  [[nodiscard]] sreh::error open(kernel_actor sup);
  /// From now on the heartbeat thread also claims the open Works of dead members and hands
  /// each id to `adopt` (which must only enqueue: it runs on the heartbeat thread).
  void adopt_works(std::function<void(const std::string&)> adopt);
  /// Where the commands other members forward on Works this node owns go: the current
  /// orchestrator (null while there is none). Thread-safe.
  void serve_works(std::function<caf::actor()> target);
  [[nodiscard]] caf::actor works_target() const;
  /// Claims now what the heartbeat thread would claim at its next beat: up to one batch of the
  /// open Works of members whose lease expired. Returns their ids (now this node's; the caller
  /// adopts them). Blocking (the store): not on a scheduler thread.
  [[nodiscard]] expected<std::vector<std::string>> claim_orphan_works();
  void leave();

  [[nodiscard]] cluster_view view() const override;
  /// The node a new run goes to: the live, linked worker with the fewest unfinished runs (active
  /// and parked, counting the runs placed on it since its last report); this node on ties and
  /// when alone.
  [[nodiscard]] std::string place() override;
  /// The peer actor of a linked member; null when not linked (or for this node).
  [[nodiscard]] peer_actor peer(const std::string& id) const;
  [[nodiscard]] run_requests_actor kernel_of(const std::string& id) const override {
    return peer(id);
  }
  [[nodiscard]] const std::string& self_id() const override { return self_.id; }
  [[nodiscard]] bool self_is_worker() const override { return self_.has_role("worker"); }
  /// Whether the member's lease is current (the store's last answer).
  [[nodiscard]] bool alive(const std::string& id) const override;

  // Called by the peer actor.
  void linked(const std::string& id, peer_actor a);
  void unlinked(const std::string& id, const std::string& why);
  void reported(const std::string& id, std::int64_t active, std::int64_t parked);

 private:
  struct member_state {
    config::cluster_member conf;
    cluster_node_info info;
    peer_actor peer;
    std::int64_t placed = 0; // runs placed on it since its last report
  };

  void heartbeat_loop();
  /// One heartbeat and, when allowed, one claim round. Returns false when the store failed.
  bool beat(bool claim);
  /// Takes the members' rows of a heartbeat (or a read after a claim) into the view.
  void seen(const std::vector<persistence::node_row>& rows);
  /// Claims the open Works of dead members for the orchestrator (adopt_works).
  void claim_works();
  [[nodiscard]] persistence::node_heartbeat my_heartbeat() const;

  caf::actor_system& sys_;
  const config::topology& topo_;
  config::cluster_member self_;
  runtime_ptr rt_;
  persistence::cluster_store& store_;
  kernel_actor sup_;
  peer_actor peer_actor_;
  std::int64_t started_at_ = 0;
  log_limiter store_errors_{std::chrono::seconds{10}};
  bool resync_ = false; // heartbeat thread only: a claim failed, its outcome unknown

  mutable std::mutex mtx_;
  std::unordered_map<std::string, member_state> members_; // by id, every topology member
  bool store_reachable_ = true;
  std::function<void(const std::string&)> adopt_work_; // under mtx_
  std::function<caf::actor()> works_target_;           // under mtx_

  std::thread thread_;
  std::mutex stop_mtx_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
};

} // namespace sreh::actors
