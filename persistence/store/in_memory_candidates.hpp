#pragma once
// The evolution gate's candidates in the in-memory store (in_memory_store.hpp): each candidate's
// current state by id, replaced whole by a write.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/evolve/candidate.hpp"
#include "persistence/store/committer.hpp"
#include "persistence/store/in_memory_undo.hpp"

namespace sreh::persistence::in_memory {

/// Not thread-safe: the in-memory store guards it with its mutex. What `apply` changed is put
/// back by `roll_back` until `keep` forgets it.
class candidate_tables {
 public:
  /// Applies the candidates of `b`: each replaces the stored one of its id, or is inserted.
  void apply(const write_batch& b);
  void keep();
  void roll_back();

  [[nodiscard]] std::optional<evolve::candidate> get(std::string_view id) const;
  /// The newest `limit` (clamped as candidate_store.hpp says), by created_at then id, descending.
  [[nodiscard]] std::vector<evolve::candidate> list(int limit) const;

 private:
  std::map<std::string, evolve::candidate, std::less<>> current_;
  undo_entries<std::string, evolve::candidate> undo_;
};

} // namespace sreh::persistence::in_memory
