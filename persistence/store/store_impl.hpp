#pragma once
// What the store implementations (SQLite, PostgreSQL, memory) share in their bodies: the reads'
// results as the interfaces return them, and the handing over of a commit's events. Included by
// the implementations only, not by the interfaces' users.

#include <cstdint>
#include <optional>
#include <vector>

#include "core/base/expected.hpp"
#include "persistence/store/committer.hpp"
#include "persistence/store/paging.hpp"

namespace sreh::persistence {

// -- reads ---------------------------------------------------------------------------------------

/// The first of the `rows` a read fetched (a read by key), nullopt when there is none, or the
/// read's error.
template <class T>
[[nodiscard]] expected<std::optional<T>> first_row(expected<std::vector<T>> rows) {
  if (!rows)
    return rows.error();
  if (rows->empty())
    return std::optional<T>{};
  return std::optional<T>{std::move(rows->front())};
}

/// The page of `window` made of the fetched `rows` (held in `Page::*field`) and its cursor, or
/// the fetch's error.
template <class Page, class Row>
[[nodiscard]] expected<Page> make_page(const page_window& window, expected<std::vector<Row>> rows,
                                       std::vector<Row> Page::*field) {
  if (!rows)
    return rows.error();
  Page p;
  p.*field = std::move(*rows);
  p.next_cursor = window.close(p.*field);
  return p;
}

// -- commits -------------------------------------------------------------------------------------

/// True when the batch of `r` met a held idempotency key (its create or create_work): nothing
/// of it is written.
[[nodiscard]] inline bool met_held_key(const commit_result& r) {
  return !r.existing_run_id.empty() || !r.existing_work_id.empty();
}

/// After a commit: moves each written batch's events into its result (no copy), numbered from
/// `first_seq` in batch order, skipping the batches that met a held key and those whose result
/// `has_events(i)` already.
template <class HasEvents>
void hand_over_events(std::vector<write_batch>& batches, std::vector<commit_result>& results,
                      std::int64_t first_seq, HasEvents has_events) {
  for (std::size_t i = 0; i < batches.size(); ++i) {
    if (met_held_key(results[i]) || has_events(i))
      continue;
    results[i].events = std::move(batches[i].events);
    batches[i].events.clear();
    for (auto& e : results[i].events)
      e.seq = first_seq++;
  }
}

inline void hand_over_events(std::vector<write_batch>& batches, std::vector<commit_result>& results,
                             std::int64_t first_seq) {
  hand_over_events(batches, results, first_seq, [](std::size_t) { return false; });
}

} // namespace sreh::persistence
