#pragma once
// Runs' conversations in the in-memory store (in_memory_store.hpp): each run's messages in seq
// order.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/conversation/message.hpp"
#include "persistence/store/committer.hpp"
#include "persistence/store/in_memory_undo.hpp"

namespace sreh::persistence::in_memory {

/// Not thread-safe: the in-memory store guards it with its mutex. What `apply` changed is put
/// back by `roll_back` until `keep` forgets it.
class message_tables {
 public:
  /// Inserts the messages of `b` (`conflict` when a (run, seq) is taken) and marks its taken.
  [[nodiscard]] sreh::error apply(const write_batch& b);
  void keep();
  void roll_back();

  [[nodiscard]] std::vector<conversation::message> list(std::string_view run_id,
                                                        std::int64_t after_seq, int limit) const;
  [[nodiscard]] std::vector<conversation::message> untaken(std::string_view run_id) const;
  [[nodiscard]] std::vector<std::string> runs_with_untaken() const;
  [[nodiscard]] std::optional<conversation::message> by_key(std::string_view run_id,
                                                            std::string_view key) const;
  [[nodiscard]] std::int64_t last_seq(std::string_view run_id) const;

 private:
  using key = std::pair<std::string, std::int64_t>; // (run_id, seq)
  std::map<key, conversation::message> rows_;
  undo_entries<key, conversation::message> undo_;
};

} // namespace sreh::persistence::in_memory
