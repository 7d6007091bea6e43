#pragma once
// The write side of the store: one transaction for the writes of many runs (the transactional
// outbox). Every aggregate's rows that must commit with a step (the run's checkpoint, its steps,
// its approvals, the events they produce) travel in one `write_batch`; the aggregates' read
// interfaces (run_store.hpp, approval_store.hpp) see them once `commit` returned.

#include <optional>
#include <string>
#include <vector>

#include "core/base/boxed.hpp"
#include "core/base/status.hpp"
#include "core/conversation/message.hpp"
#include "core/evolve/candidate.hpp"
#include "core/memory/memory.hpp"
#include "core/model/approval.hpp"
#include "core/model/event.hpp"
#include "core/model/run.hpp"
#include "core/model/step.hpp"
#include "core/works/work.hpp"
#include "core/world/entity.hpp"
#include "persistence/store/message_store.hpp"

namespace sreh::persistence {

/// One run's writes for one durable commit. Batches from many runs are applied in one
/// transaction by the group-commit writer (transactional outbox: step rows, the run's checkpoint
/// and the events they produce commit together or not at all).
// The run rows and Works, which most batches lack or carry one of, are `boxed`: a pointer each
// when absent, where a batch queued by each of 10,000 runs in flight held two of each by value.
struct write_batch {
  /// Insert a new run. When another run already holds `create->idempotency_key` (non-empty),
  /// nothing of this batch is applied and the result names the existing run.
  boxed<run> create;
  /// Replace the stored row of an existing run (state, checkpoint, counters, ...).
  boxed<run> update;
  /// Upsert by (run_id, n): the intent inserts, the outcome replaces.
  std::vector<step> steps;
  /// Upsert by id: a new approval, or its votes and state after a decision.
  std::vector<approval> approvals;
  /// Insert a new Work. When another Work already holds `create_work->idempotency_key`
  /// (non-empty), nothing of this batch is applied and the result names the existing Work.
  boxed<works::work> create_work;
  /// Replace the stored row of an existing Work.
  boxed<works::work> update_work;
  /// Template versions, inserted when absent (a version's text never changes).
  std::vector<works::stored_template> templates;
  /// World state: each replaces the entity's current row and is added to its history under its
  /// `version` (an existing (id, version) in the history is a faulty batch).
  std::vector<world::entity> entities;
  /// Long-term memory: each a new version of its entry (memory_store.hpp). Version 1 inserts the
  /// entry; version N replaces it when its stored version is N−1, and otherwise fails the
  /// commit with `conflict` naming the entry (another change came first).
  std::vector<memory::entry> memories;
  /// The evolution gate's candidates (candidate_store.hpp): each replaces the stored candidate
  /// of its id whole, or inserts it.
  std::vector<evolve::candidate> candidates;
  /// A run's conversation (message_store.hpp): each inserted under its (run_id, seq), which must
  /// be free (else the commit fails with `conflict`: another message took that place).
  std::vector<conversation::message> messages;
  /// Messages taken into their run by a step of this batch.
  std::vector<message_taken> taken;
  /// Appended to the event log; `seq` is assigned at commit.
  std::vector<event> events;
};

/// What happened to one batch.
struct commit_result {
  sreh::error err;              // set when the transaction failed (nothing applied)
  std::string existing_run_id;  // set when `create` met an existing idempotency key
  std::string existing_work_id; // set when `create_work` met an existing idempotency key
  std::vector<event> events;    // the batch's events with their assigned `seq`
};

/// Applies write batches atomically. Thread-safe (calls are serialised inside); on a node the
/// group-commit writer (group_writer.hpp) is its only caller, so that one transaction carries
/// many runs' steps.
class committer {
 public:
  virtual ~committer() = default;

  /// Applies every batch in one transaction and returns one result per batch, in order.
  /// Batches apply in order, so a batch may update a run that an earlier batch of the same call
  /// creates, never one that a later batch creates.
  ///
  /// On failure every result carries the same error, nothing is applied and the batches are left
  /// as given (so a caller may retry them): `unavailable` when the database is away or busy,
  /// `conflict` when a run is owned by another node now (PostgreSQL's fencing), `internal` for
  /// a faulty batch (an update or a step of a run that does not exist, a duplicate run or event
  /// id). On success each applied batch's events are moved into its result with their `seq` set
  /// (in batch order, gap-free) and the audit chain extended over them (persistence/audit); a
  /// batch skipped for an existing idempotency key keeps its events.
  [[nodiscard]] virtual std::vector<commit_result> commit(std::vector<write_batch>& batches) = 0;
};

} // namespace sreh::persistence
