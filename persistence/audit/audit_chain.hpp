#pragma once
// The check of an audit chain entry by entry, free of any SQL dialect: a store streams its
// entries in seq order into an `audit_chain_walk` and looks entries up by hash when asked.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/expected.hpp"
#include "core/model/event.hpp"
#include "persistence/audit/audit.hpp"
#include "persistence/audit/audit_hasher.hpp"

namespace sreh::persistence {

/// An entry as stored: the event and its two chain columns.
struct audit_entry {
  event e;
  std::string prev_hash;
  std::string hash;
};

/// The store's side of a walk: the entries found by their chain columns. Called only on the
/// first bad entry.
class audit_lookup {
 public:
  virtual ~audit_lookup() = default;
  /// The seq of an entry whose prev_hash is `hash`; 0 when none.
  [[nodiscard]] virtual std::int64_t seq_after_hash(const std::string& hash) = 0;
  /// The seq of an entry whose hash is `hash`; 0 when none.
  [[nodiscard]] virtual std::int64_t seq_of_hash(const std::string& hash) = 0;
};

/// The walk over a chain: the last good entry and the verdict on the next one. Not
/// thread-safe: one per walk.
class audit_chain_walk {
 public:
  explicit audit_chain_walk(audit_lookup& lookup);

  /// Checks the next entry; false when it is bad (the report then names it).
  [[nodiscard]] bool check(const audit_entry& x);

  [[nodiscard]] std::int64_t done() const { return report_.entries; }
  [[nodiscard]] audit_report take() { return std::move(report_); }

 private:
  bool fail(audit_fault f, std::int64_t seq, std::string id, std::string message);
  [[nodiscard]] std::string removed_message(const audit_entry& x) const;
  std::int64_t home_of(const audit_entry& x);

  audit_lookup& lookup_;
  audit_hasher hasher_;
  audit_report report_;
  std::int64_t last_seq_ = 0;
  std::string last_id_;
};

// -- chaining a log written before the chain ----------------------------------------------------

/// One entry's chain columns.
struct audit_link {
  std::int64_t seq;
  std::string prev_hash;
  std::string hash;
};

/// Migration 2 of every store: chains the entries written before the chain existed, in seq
/// order, a page at a time. `read(after, limit)` returns the next `limit` events after seq
/// `after` (expected<std::vector<event>>; empty at the end), `write(links)` stores a page's
/// chain columns (sreh::error). SHA-256 failing is `internal` with `sha_failed` as message.
template <class Read, class Write>
sreh::error chain_existing_events(std::string_view sha_failed, Read read, Write write) {
  constexpr int page_size = 1'000;
  audit_hasher hasher;
  std::string prev{audit_genesis_hash};
  std::int64_t after = 0;
  std::vector<audit_link> links;
  for (;;) {
    // A page is read to the end before it is written: no write while a read of the table runs.
    expected<std::vector<event>> page = read(after, page_size);
    if (!page)
      return page.error();
    if (page->empty())
      return {};
    links.clear();
    for (const auto& e : *page) {
      const auto h = hasher.next(prev, e.seq, e);
      if (h.empty())
        return {errc::internal, std::string{sha_failed}};
      links.push_back({e.seq, prev, std::string{h}});
      prev.assign(h);
    }
    if (auto err = write(links))
      return err;
    after = page->back().seq;
  }
}

} // namespace sreh::persistence
