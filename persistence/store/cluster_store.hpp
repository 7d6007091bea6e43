#pragma once
// What the nodes of a cluster share through the store: membership rows with heartbeats (a node's
// lease on the runs it owns) and the claiming of runs whose owner's lease expired
// (docs/cluster.md). Implemented by the PostgreSQL store; every time is the database's clock, so
// the nodes' clocks need not agree.

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/expected.hpp"
#include "core/model/run.hpp"

namespace sreh::persistence {

/// What a node says about itself at each heartbeat.
struct node_heartbeat {
  std::string node_id;
  std::string http;             // host:port of its REST/SSE front
  std::string cluster;          // host:port of its middleman
  std::string roles;            // comma-separated
  std::int64_t active_runs = 0; // run actors alive
  std::int64_t parked_runs = 0; // runs waiting for a decision (no actor)
  std::int64_t started_at = 0;  // when this incarnation started (µs since the epoch)
};

/// A member as the store sees it.
struct node_row {
  node_heartbeat node;
  std::int64_t heartbeat_age_ms = 0; // how long since its last heartbeat (database clock)
  bool alive = false;                // its lease has not expired
  std::int64_t owned_runs = 0;       // unfinished runs it owns
};

/// What one heartbeat found.
struct heartbeat_result {
  std::vector<node_row> nodes; // every member, by id
  /// This node's previous lease had expired before this heartbeat renewed it: survivors may
  /// have claimed its runs (its copies of them are fenced off at their next commit).
  bool lease_was_expired = false;
};

/// Cluster membership and run leases. Thread-safe; membership has a connection of its own, so a
/// heartbeat never waits for a free reader or a commit. Errors: `unavailable` when the database
/// is away (a heartbeat that fails is a lease that is not renewed: the caller retries before the
/// lease runs out), `internal` for other SQL errors (named by their sqlstate).
class cluster_store {
 public:
  virtual ~cluster_store() = default;

  /// Upserts the node's row with a lease of `ttl` from now and returns every member. Blocks
  /// while another node is claiming this node's runs, so a node that comes back never resumes
  /// a run that a survivor has just taken.
  [[nodiscard]] virtual expected<heartbeat_result> heartbeat(const node_heartbeat& hb,
                                                             std::chrono::milliseconds ttl) = 0;

  /// Moves up to `limit` unfinished runs (pending, running or waiting) of members whose lease
  /// expired to `node_id` and returns them, oldest first. Runs another claimer is taking at the
  /// same moment are skipped (SKIP LOCKED), so concurrent survivors split the work.
  [[nodiscard]] virtual expected<std::vector<run>> claim_orphans(std::string_view node_id,
                                                                 int limit) = 0;

  /// Moves up to `limit` open Works (not resolved or cancelled) of members whose lease expired
  /// to `node_id` and returns their ids, oldest first; concurrent claimers split them (SKIP
  /// LOCKED). A Work's row then names its new owner, and an update of it by the old one is
  /// refused (`conflict`).
  [[nodiscard]] virtual expected<std::vector<std::string>>
  claim_orphan_works(std::string_view node_id, int limit) = 0;

  /// Every member, without heartbeating.
  [[nodiscard]] virtual expected<std::vector<node_row>> members() = 0;
};

} // namespace sreh::persistence
