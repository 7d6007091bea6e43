#pragma once
// The cluster as one node sees it (GET /v1/cluster/nodes): the topology's members with what the
// store's heartbeats and the middleman links say about them.

#include <cstdint>
#include <string>
#include <vector>

namespace sreh::actors {

struct cluster_node_info {
  std::string id;
  std::string http;    // host:port of its REST/SSE front
  std::string cluster; // host:port of its middleman
  std::vector<std::string> roles;
  bool self = false; // the node answering
  /// alive: its lease is current; dead: its lease expired (its runs are claimed by survivors);
  /// unknown: it has never heartbeated (not started yet).
  std::string state = "unknown";
  bool connected = false; // middleman link to it is up (always true for self)
  std::string link_error; // why the last connection attempt failed, if it did
  std::int64_t heartbeat_age_ms = -1;
  /// Run actors alive and runs waiting for a decision, from its latest heartbeat or push; 0
  /// for a member that is not alive (it holds nothing).
  std::int64_t active_runs = 0;
  std::int64_t parked_runs = 0;
  /// Unfinished runs the store gives it, as of this node's latest heartbeat: a dead member's
  /// drop to 0 as survivors claim them.
  std::int64_t owned_runs = 0;
  std::int64_t started_at = 0; // µs since the epoch
};

struct cluster_view {
  bool clustered = false; // false: a single node (no topology)
  std::string name;
  std::string self_id;
  std::int64_t heartbeat_ms = 0;
  std::int64_t lease_ttl_ms = 0;
  bool store_reachable = true; // the last heartbeat reached the store
  std::vector<cluster_node_info> nodes;
};

} // namespace sreh::actors
