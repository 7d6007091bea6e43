#pragma once
// The tamper-evident audit log: a SHA-256 hash chain over the event log.
//
// Goals, policy decisions (in step.intent data), approvals (approval.* events), actions
// (step.outcome) and config changes (node.config) are all events, so chaining the event log makes
// all of them tamper-evident. Each entry carries the hash of the previous entry (`prev_hash`)
// and its own `hash`:
//
//   hash = hex(SHA-256(prev_hash || "\n" || audit_canonical(seq, event)))
//
// with prev_hash of seq 1 = `audit_genesis_hash`. The store computes both at commit. A chain
// only shows that nothing was changed *after* an entry was written up to the last hash one
// trusts: keep the last hash that `sreh audit verify` prints somewhere else to detect a rewrite
// of the whole tail (or the removal of the newest entries).

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "core/base/expected.hpp"
#include "core/model/event.hpp"

namespace sreh::persistence {

/// The prev_hash of the first entry: 64 zeros.
inline constexpr std::string_view audit_genesis_hash =
  "0000000000000000000000000000000000000000000000000000000000000000";

/// The text of an entry that is hashed: seq, id, run_id, run_seq, kind, at and data, in that
/// order, joined with "\n" (integers in decimal; `data` verbatim and last, so it may contain
/// newlines; ids and kinds are generated tokens without newlines). `e.seq` is ignored: the
/// entry's position is `seq` (at commit the event has no seq yet). The one definition of the
/// canonical form: every store and the verifier use it.
void append_audit_canonical(std::string& out, std::int64_t seq, const event& e);
[[nodiscard]] std::string audit_canonical(std::int64_t seq, const event& e);

/// The hash of entry `e` at position `seq` after an entry whose hash is `prev_hash` (lower-case
/// hex SHA-256, 64 characters); empty only when OpenSSL fails.
[[nodiscard]] std::string audit_hash(std::string_view prev_hash, std::int64_t seq, const event& e);

// -- verification --------------------------------------------------------------------------------

/// What is wrong with the first bad entry.
enum class audit_fault {
  none,
  edited,       // its stored hash does not match its content
  removed,      // an entry is missing: a gap in seq
  reordered,    // its content and hash belong at another seq
  chain_broken, // it matches its own hash, but its prev_hash is not the previous entry's hash
};

/// "ok", "edited", "removed", "reordered", "chain broken".
[[nodiscard]] const char* to_string(audit_fault f);

struct audit_report {
  audit_fault fault = audit_fault::none;
  std::int64_t entries = 0; // entries found good (all of them when ok)
  std::string last_hash;    // hash of the last good entry (genesis for an empty log)
  std::int64_t bad_seq = 0; // the first bad entry (removed: the missing seq)
  std::string bad_id;       // its id ("" when removed: the entry is gone)
  std::string message;      // what is wrong, for people

  [[nodiscard]] bool ok() const { return fault == audit_fault::none; }
};

/// `progress(done, total)` of a verification: called every `audit_progress_every` entries and
/// at the end (`total` is the last seq when it began); may be empty.
using audit_progress = std::function<void(std::int64_t done, std::int64_t total)>;
inline constexpr std::int64_t audit_progress_every = 16'384;

} // namespace sreh::persistence
