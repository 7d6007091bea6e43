#pragma once
// Keyset paging, the one way every store lists runs and approvals (and later works and flows):
// newest first by id, a page of 1..500 rows, and a cursor that is the id of the last row of the
// page. The next page is the rows whose id is smaller than the cursor, so a page never repeats or
// skips a row that was written while a client paged (new ids are larger). Ids compare as bytes.

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

namespace sreh::persistence {

/// The most rows one page of a list holds (a larger limit is clamped to it).
inline constexpr int max_page_rows = 500;
/// The most events one `read_events` returns.
inline constexpr int max_event_rows = 10'000;
/// The most versions one `entity_history` returns.
inline constexpr int max_history_rows = 1'000;

/// `asked` clamped to 1..`max`: a limit of 0 or below asks for one row.
[[nodiscard]] constexpr int clamp_limit(int asked, int max) {
  return std::clamp(asked, 1, max);
}

/// One page of a list: how many rows the caller gets, how many a store fetches for it, and
/// where the next page starts.
class page_window {
 public:
  /// A page of `asked` rows, clamped to 1..`max`.
  explicit constexpr page_window(int asked, int max = max_page_rows)
    : limit_(clamp_limit(asked, max)) {}

  /// The rows of the page.
  [[nodiscard]] constexpr int limit() const { return limit_; }
  /// The rows a store fetches (in page order, after the cursor): one more than the page, so that
  /// the extra row tells whether another page follows.
  [[nodiscard]] constexpr int fetch() const { return limit_ + 1; }

  /// Cuts `rows` (at most `fetch()`, in page order, each with an `id`) to the page and returns
  /// the next cursor: the id of the page's last row when another page follows, else "".
  template <class Row>
  [[nodiscard]] std::string close(std::vector<Row>& rows) const {
    const auto limit = static_cast<std::size_t>(limit_);
    if (rows.size() <= limit)
      return {};
    rows.resize(limit);
    return rows.back().id;
  }

 private:
  int limit_;
};

/// True when a row with `id` belongs after the cursor `before_id` ("" = from the newest).
[[nodiscard]] inline bool after_cursor(const std::string& id, const std::string& before_id) {
  return before_id.empty() || id < before_id;
}

} // namespace sreh::persistence
