#pragma once
// Where the event relays (net/nats/relay.hpp) keep how far they delivered the event log.

#include <cstdint>
#include <string_view>

#include "core/base/expected.hpp"

namespace sreh::persistence {

/// Durable relay offsets, one per relay name (e.g. "jetstream"). Thread-safe; each write is its
/// own small transaction outside `commit`, so a relay never waits behind a group commit for
/// long. Errors: `unavailable` when the database is away or busy.
class relay_store {
 public:
  virtual ~relay_store() = default;

  /// The last event seq that the relay `name` has delivered; 0 when it has stored none.
  [[nodiscard]] virtual expected<std::int64_t> relay_offset(std::string_view name) = 0;
  /// Stores `seq` as the offset of the relay `name` (insert or replace, also with a smaller
  /// value; durable when it returns). It does not touch the event log.
  [[nodiscard]] virtual sreh::error set_relay_offset(std::string_view name, std::int64_t seq) = 0;
};

} // namespace sreh::persistence
