#pragma once
// The evolution gate's one way in (docs/evolve.md): propose a candidate, read the candidates,
// vote on a promotion, roll back. Every change of a candidate is committed through the node's
// commit queue with a `candidate.*` event, so proposals, votes, promotions and rollbacks are in
// the audit chain with who made them. The evaluations run one at a time on the `evolve` service
// (a supervised child of the node, restarted when it fails); a candidate still evaluating when
// the node stopped is evaluated again after the restart.
//
// Every method blocks on the store: call it from the HTTP handler pool, never from a CAF
// scheduler thread. Thread-safe.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "actors/evolve/versions.hpp"
#include "actors/runtime/supervision.hpp"
#include "core/base/clock.hpp"
#include "core/base/expected.hpp"
#include "core/base/id.hpp"
#include "core/evolve/candidate.hpp"
#include "persistence/store/commit_queue.hpp"
#include "persistence/store/store.hpp"

namespace sreh::actors {

/// `evolve:` in the node config.
struct gate_settings {
  std::int64_t approvals = 1;                 // distinct approvers a promotion needs
  std::vector<std::string> roles{"approver"}; // who may approve (any of; higher roles too)
};

/// What an evaluation found (eval/evolve.hpp).
struct gate_result {
  std::string report = "null";
  std::vector<std::string> regressions;
  std::string error;
};

/// Evaluates candidate `c` against version `base`; returns early once `cancel` is set.
using gate_fn = std::function<gate_result(const evolve::candidate& c, const std::string& base,
                                          const std::atomic<bool>& cancel)>;

class candidate_service {
 public:
  candidate_service(persistence::store& store, persistence::commit_queue& writes,
                    const sreh::clock& clock, id_generator& ids,
                    std::shared_ptr<version_registry> versions, gate_settings settings,
                    gate_fn evaluate);
  ~candidate_service();
  candidate_service(const candidate_service&) = delete;
  candidate_service& operator=(const candidate_service&) = delete;

  /// At start: every promoted version is made available again (runs pinned to it resume on it),
  /// the current one is made current, and the candidates left evaluating are queued again.
  [[nodiscard]] sreh::error load();

  /// A new candidate by `who`, queued for evaluation. invalid_argument naming what is wrong (an
  /// empty or oversized body, one that does not parse); conflict for a kind this node does not
  /// reason with, or the same body as a candidate still in play.
  [[nodiscard]] expected<evolve::candidate> propose(evolve::artefact kind, std::string body,
                                                    std::string reason, std::string_view who);
  [[nodiscard]] expected<evolve::candidate> get(std::string_view id);
  [[nodiscard]] expected<std::vector<evolve::candidate>> list(int limit = 100);
  [[nodiscard]] std::string current(evolve::artefact kind) const;

  /// `vote` on the promotion of `id`; promotes once the approval is granted. not_found;
  /// conflict when it is not awaiting approval (evaluating, refused: with the regressions) or was
  /// evaluated against a version that is no longer current; forbidden for the proposer and for
  /// a role too low.
  [[nodiscard]] expected<evolve::candidate> promote(std::string_view id, approval_vote vote);
  /// Restores the version the current candidate of `kind` replaced. conflict when the config's
  /// version is current already.
  [[nodiscard]] expected<evolve::candidate> rollback(evolve::artefact kind, std::string_view who);

  /// Makes candidate `id`, which must be of `kind`, available to the runs that pin it (a fork
  /// under it: docs/fork.md), in whatever state it is. not_found; invalid_argument for another
  /// kind, or a body that no longer loads.
  [[nodiscard]] sreh::error make_available(std::string_view id, evolve::artefact kind);

  /// Makes the versions the store says are current (promoted here or on another node of the
  /// cluster) current here too, and every candidate's version available (runs and forks pin
  /// them). Blocks on the store.
  [[nodiscard]] sreh::error reconcile();
  /// Tells the service that a candidate changed (a `candidate.*` event, possibly another
  /// node's): the evaluator's refresher reconciles soon. Never blocks (the hub's thread).
  void changed();

  /// The supervised evaluator (`evolve` in /v1/actors).
  [[nodiscard]] service_ptr evaluator();

 private:
  class worker;
  friend class worker;

  /// Commits `cs` (each its next revision) with one event each; waits for the commit.
  sreh::error commit(std::vector<evolve::candidate*> cs, const std::vector<std::string>& kinds,
                     const std::vector<std::string>& data);
  /// Evaluates the queue's candidates until `stop` (the worker's thread).
  void drain(const std::atomic<bool>& stop);
  void finish(const std::string& id, const std::string& base, gate_result r);
  [[nodiscard]] expected<std::optional<evolve::candidate>> promoted(evolve::artefact kind);

  persistence::store& store_;
  persistence::commit_queue& writes_;
  const sreh::clock& clock_;
  id_generator& ids_;
  std::shared_ptr<version_registry> versions_;
  gate_settings settings_;
  gate_fn evaluate_;
  std::mutex mu_; // one state change at a time
  std::mutex queue_mu_;
  std::condition_variable queue_cv_;
  std::deque<std::string> queue_;
  bool stale_ = false; // reconcile: a candidate changed (guarded by queue_mu_)
  std::shared_ptr<worker> worker_;
};

} // namespace sreh::actors
