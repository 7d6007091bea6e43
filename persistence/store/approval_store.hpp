#pragma once
// Approvals as stored: durable requests for a human decision on a step. Written only through
// the committer (committer.hpp), with the run's waiting state and events; these are its reads.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/expected.hpp"
#include "core/model/approval.hpp"
#include "persistence/store/paging.hpp"

namespace sreh::persistence {

struct approval_filter {
  std::optional<approval_state> state;
  std::string run_id;    // empty = all runs
  std::string role;      // only approvals this role may decide (rank rule); "" = all
  std::string before_id; // cursor (newest first)
  int limit = 50;        // 1..500 (paging.hpp)
};

struct approval_page {
  std::vector<approval> approvals;
  std::string next_cursor; // empty on the last page
};

/// Reads of approvals. Thread-safe; reads may run concurrently with a commit and see the last
/// committed state. Errors: `unavailable` when the database is away or busy, `internal` for a
/// row that cannot be read. Absence is not an error.
class approval_store {
 public:
  virtual ~approval_store() = default;

  [[nodiscard]] virtual expected<std::optional<approval>> get_approval(std::string_view id) = 0;
  /// One page of approvals, newest id first (paging.hpp). The role filter keeps the approvals
  /// that `role` may decide: core's apply_vote rule (approval_codec.hpp: needed_rank).
  [[nodiscard]] virtual expected<approval_page> list_approvals(const approval_filter& f) = 0;
  /// Every pending approval (for timers at start), oldest first (by created_at, id).
  [[nodiscard]] virtual expected<std::vector<approval>> pending_approvals() = 0;
  /// The approval of step `n` of a run, if any (the newest by created_at, id when several).
  [[nodiscard]] virtual expected<std::optional<approval>> approval_for_step(std::string_view run_id,
                                                                            std::int64_t n) = 0;
};

} // namespace sreh::persistence
