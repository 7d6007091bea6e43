#pragma once
// The durable store, as one object: the committer (the one transaction of the transactional
// outbox) and the reads of each aggregate, each an interface of its own so that a caller that
// needs one aggregate can take just that one:
//
//   committer       committer.hpp       write batches: runs, steps, approvals, events
//   run_store       run_store.hpp       runs, steps, the event log, rate-limit counts, stats
//   approval_store  approval_store.hpp  approvals
//   relay_store     relay_store.hpp     relay offsets
//   work_store      work_store.hpp      Works and the template versions they are pinned to
//   world_store     work_store.hpp      world state: entities and their history
//   memory_store    memory_store.hpp    long-term memory: entries, their versions, search
//   candidate_store candidate_store.hpp the evolution gate's candidates
//   message_store   message_store.hpp   runs' conversations
//   notify_store    notify_store.hpp    the notifications' outbox
//   cluster_store   cluster_store.hpp   membership and run leases (PostgreSQL only)
//
// Later aggregates (flows) get an interface of their own here, and their rows travel in
// write_batch when they must commit with a step.

#include <memory>

#include "core/base/status.hpp"
#include "persistence/store/approval_store.hpp"
#include "persistence/store/candidate_store.hpp"
#include "persistence/store/cluster_store.hpp"
#include "persistence/store/committer.hpp"
#include "persistence/store/memory_store.hpp"
#include "persistence/store/message_store.hpp"
#include "persistence/store/notify_store.hpp"
#include "persistence/store/relay_store.hpp"
#include "persistence/store/run_store.hpp"
#include "persistence/store/work_store.hpp"

namespace sreh::persistence {

/// Every aggregate of one database. Implementations: SQLite (embedded default), PostgreSQL
/// (cluster), and in_memory_store.hpp (in memory, for unit tests); all pass
/// tests/integration/store_conformance*. Thread-safe, as each aggregate states.
class store : public committer,
              public run_store,
              public approval_store,
              public relay_store,
              public work_store,
              public world_store,
              public memory_store,
              public candidate_store,
              public message_store,
              public notify_store {
 public:
  ~store() override = default;

  /// Cheap liveness probe for /readyz: `unavailable` when the database is away.
  [[nodiscard]] virtual sreh::error ping() = 0;
  /// Cluster membership and run leases, when this store can be shared by the nodes of a
  /// cluster (PostgreSQL); null otherwise (SQLite, in memory).
  [[nodiscard]] virtual cluster_store* cluster() { return nullptr; }
};

using store_ptr = std::unique_ptr<store>;

} // namespace sreh::persistence
