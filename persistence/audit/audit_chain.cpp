#include "persistence/audit/audit_chain.hpp"

#include <fmt/format.h>

namespace sreh::persistence {

namespace {

std::string_view short_hash(std::string_view h) {
  return h.substr(0, 12);
}

} // namespace

const char* to_string(audit_fault f) {
  switch (f) {
  case audit_fault::none:
    return "ok";
  case audit_fault::edited:
    return "edited";
  case audit_fault::removed:
    return "removed";
  case audit_fault::reordered:
    return "reordered";
  case audit_fault::chain_broken:
    return "chain broken";
  }
  return "unknown";
}

audit_chain_walk::audit_chain_walk(audit_lookup& lookup) : lookup_(lookup) {
  report_.last_hash = audit_genesis_hash;
}

bool audit_chain_walk::check(const audit_entry& x) {
  if (x.e.seq != last_seq_ + 1)
    return fail(audit_fault::removed, last_seq_ + 1, "", removed_message(x));
  const auto computed = std::string{hasher_.next(x.prev_hash, x.e.seq, x.e)};
  if (computed != x.hash) {
    if (auto at = home_of(x); at > 0)
      return fail(audit_fault::reordered, x.e.seq, x.e.id,
                  fmt::format("this entry and its hash belong at seq {} (moved)", at));
    return fail(audit_fault::edited, x.e.seq, x.e.id,
                fmt::format("its content does not match its stored hash {}… (recomputed {}…)",
                            short_hash(x.hash), short_hash(computed)));
  }
  if (x.prev_hash != report_.last_hash)
    return fail(audit_fault::chain_broken, x.e.seq, x.e.id,
                fmt::format("it matches its own hash, but its prev_hash {}… is not the hash "
                            "{}… of {} — an earlier entry was rewritten or replaced",
                            short_hash(x.prev_hash), short_hash(report_.last_hash),
                            last_seq_ == 0 ? std::string{"the genesis"}
                                           : fmt::format("entry {} ({})", last_seq_, last_id_)));
  last_seq_ = x.e.seq;
  last_id_ = x.e.id;
  report_.last_hash = x.hash;
  ++report_.entries;
  return true;
}

bool audit_chain_walk::fail(audit_fault f, std::int64_t seq, std::string id, std::string message) {
  report_.fault = f;
  report_.bad_seq = seq;
  report_.bad_id = std::move(id);
  report_.message = std::move(message);
  return false;
}

std::string audit_chain_walk::removed_message(const audit_entry& x) const {
  const auto missing = last_seq_ + 1;
  const auto range = x.e.seq - 1 == missing
                       ? fmt::format("entry {} is missing", missing)
                       : fmt::format("entries {}..{} are missing", missing, x.e.seq - 1);
  if (last_seq_ == 0)
    return fmt::format("{}: the log starts at {} ({})", range, x.e.seq, x.e.id);
  return fmt::format("{}: the log goes from {} ({}) to {} ({})", range, last_seq_, last_id_,
                     x.e.seq, x.e.id);
}

/// Where a whole entry (content and hashes) that does not match its position came from: the
/// seq before the entry that names its hash as prev_hash, or after the entry whose hash is its
/// prev_hash, if its content hashes right there; 0 when neither (then it was edited). Runs only
/// on the first bad entry (each lookup may be a scan).
std::int64_t audit_chain_walk::home_of(const audit_entry& x) {
  std::int64_t candidates[2] = {0, 0};
  if (auto after = x.hash.empty() ? 0 : lookup_.seq_after_hash(x.hash); after > 1)
    candidates[0] = after - 1;
  if (x.prev_hash == audit_genesis_hash)
    candidates[1] = 1;
  else if (auto before = x.prev_hash.empty() ? 0 : lookup_.seq_of_hash(x.prev_hash); before > 0)
    candidates[1] = before + 1;
  for (auto at : candidates)
    if (at > 0 && at != x.e.seq && hasher_.next(x.prev_hash, at, x.e) == x.hash)
      return at;
  return 0;
}

} // namespace sreh::persistence
