#pragma once
// A run's conversation as stored (core/conversation, docs/conversation.md): each message in the
// run's order (`seq`), who said it, and the step of the run that took it. Written only through
// the committer (committer.hpp: write_batch::messages inserts one, write_batch::taken marks one
// taken in the transaction of the step that took it); these are its reads.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/expected.hpp"
#include "core/conversation/message.hpp"

namespace sreh::persistence {

/// The most messages one `list_messages` returns (a larger limit is clamped to it).
inline constexpr int max_message_rows = 1000;

/// A message taken into its run by step `step` (its `message` step).
struct message_taken {
  std::string run_id;
  std::int64_t seq = 0;
  std::int64_t step = 0;
};

/// Reads of runs' conversations. Thread-safe; `unavailable` when the database is away,
/// `internal` for a row that cannot be read (naming it). Absence is not an error.
class message_store {
 public:
  virtual ~message_store() = default;

  /// The messages of `run_id` after `after_seq`, oldest first, at most `limit` (clamped to
  /// 1..max_message_rows).
  [[nodiscard]] virtual expected<std::vector<conversation::message>>
  list_messages(std::string_view run_id, std::int64_t after_seq, int limit) = 0;
  /// The people's messages of `run_id` no step has taken yet, oldest first.
  [[nodiscard]] virtual expected<std::vector<conversation::message>>
  untaken_messages(std::string_view run_id) = 0;
  /// The runs that have a person's message no step has taken yet (for the kernel at start).
  [[nodiscard]] virtual expected<std::vector<std::string>> runs_with_untaken_messages() = 0;
  /// The message of `run_id` sent with idempotency key `key`, if any.
  [[nodiscard]] virtual expected<std::optional<conversation::message>>
  message_by_key(std::string_view run_id, std::string_view key) = 0;
  /// The `seq` of the run's newest message; 0 when it has none.
  [[nodiscard]] virtual expected<std::int64_t> last_message_seq(std::string_view run_id) = 0;
};

} // namespace sreh::persistence
