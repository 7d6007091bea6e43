#pragma once
// The stored shape of Works and world entities, shared by every store: the `labels` column as
// compact JSON (so that one label is a substring the SQL stores can look for), the filters of
// list_works as code (the one definition of what a filter keeps; the SQL stores narrow the
// rows first and check each with it), the paging over such filtered rows, and the columns of an
// entity row.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/expected.hpp"
#include "core/works/work.hpp"
#include "core/world/entity.hpp"
#include "persistence/store/paging.hpp"
#include "persistence/store/work_store.hpp"

namespace sreh::persistence {

/// A JSON object's compact text as RapidJSON writes it; `text` itself when it is not an object.
[[nodiscard]] std::string compact_object(std::string_view text);

/// `"key":"value"` as the label appears in the compact text of a labels object: a prefilter
/// (every Work with the label contains it; `matches` decides).
[[nodiscard]] std::string label_pattern(std::string_view key, std::string_view value);

/// True when `w` passes every filter of `f` but the cursor: state, kind, severity, the label
/// (a string member `label_key` equal to `label_value`) and the text (an ASCII case-insensitive
/// substring of the title).
[[nodiscard]] bool matches(const work_filter& f, const works::work& w);

/// One page of `f`, newest id first: `fetch(before_id, n)` returns up to `n` rows with ids
/// below `before_id` ("" = from the newest), newest first, narrowed by any part of `f` it can;
/// they are checked with `matches`, and fetched again after the last one until the page (and
/// the one row that tells whether another follows) is full or the rows run out.
template <class Fetch>
[[nodiscard]] expected<work_page> filtered_page(const work_filter& f, Fetch&& fetch) {
  const page_window window{f.limit};
  const auto wanted = static_cast<std::size_t>(window.fetch());
  work_page page;
  std::string before = f.before_id;
  for (;;) {
    expected<std::vector<works::work>> rows = fetch(before, window.fetch());
    if (!rows)
      return rows.error();
    if (rows->empty())
      break;
    const bool last = rows->size() < wanted;
    before = rows->back().id;
    for (auto& w : *rows)
      if (page.works.size() < wanted && matches(f, w))
        page.works.push_back(std::move(w));
    if (last || page.works.size() >= wanted)
      break;
  }
  page.next_cursor = window.close(page.works);
  return page;
}

/// Reads the stored columns of an entity into `e`: attrs (world::attrs_json), depends_on (a JSON
/// array of strings) and source (by name). `internal` naming the column that is wrong.
[[nodiscard]] sreh::error read_entity_columns(std::string_view attrs, std::string_view depends_on,
                                              std::string_view source, world::entity& e);

} // namespace sreh::persistence
