#pragma once
// The evolution gate's candidates as stored (core/evolve, docs/evolve.md): each candidate's
// current state, as its document (evolve::to_json) beside the columns that reads order on.
// Written only through the committer (committer.hpp: write_batch::candidates, with the event of
// the change for the audit chain); these are its reads.

#include <optional>
#include <string_view>
#include <vector>

#include "core/base/expected.hpp"
#include "core/evolve/candidate.hpp"

namespace sreh::persistence {

/// The most candidates one `list_candidates` returns (a larger limit is clamped to it).
inline constexpr int max_candidate_rows = 500;

/// Reads of the evolution gate's candidates. Thread-safe; `unavailable` when the database is
/// away, `internal` for a row that cannot be read (naming its id). Absence is not an error.
class candidate_store {
 public:
  virtual ~candidate_store() = default;

  /// The candidate `id` as last committed.
  [[nodiscard]] virtual expected<std::optional<evolve::candidate>>
  get_candidate(std::string_view id) = 0;
  /// The newest `limit` candidates (clamped to 1..max_candidate_rows), newest first: by
  /// created_at, then id, descending.
  [[nodiscard]] virtual expected<std::vector<evolve::candidate>> list_candidates(int limit) = 0;
};

} // namespace sreh::persistence
