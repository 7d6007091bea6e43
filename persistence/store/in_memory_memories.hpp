#pragma once
// The long-term memory aggregate of the in-memory store (in_memory_store.hpp): entries with
// their versions. Its search stands in for a full-text engine in unit tests: a term matches a
// word of the text or tags that starts with the term's stem or whose stem it starts with (a
// crude English stemmer), relevance counts the matches. The real engines are SQLite FTS5 and
// PostgreSQL's tsvector (memory_store.hpp).

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/memory/search.hpp"
#include "persistence/store/committer.hpp"
#include "persistence/store/in_memory_undo.hpp"

namespace sreh::persistence::in_memory {

/// Not thread-safe: the in-memory store guards it with its mutex. What `apply` changed is put
/// back by `roll_back` until `keep` forgets it.
class memory_tables {
 public:
  /// Applies the memory versions of `b`: `conflict` when one does not follow its stored version.
  [[nodiscard]] sreh::error apply(const write_batch& b);
  void keep();
  void roll_back();

  [[nodiscard]] std::vector<memory::candidate> search(const memory::query& q) const;
  [[nodiscard]] std::optional<memory::entry> get(std::string_view id) const;
  [[nodiscard]] std::optional<memory::entry> version(std::string_view id, std::int64_t v) const;
  [[nodiscard]] std::vector<memory::entry> versions(std::string_view id) const;

 private:
  using version_key = std::pair<std::string, std::int64_t>; // (id, version)

  std::map<std::string, memory::entry, std::less<>> current_;
  std::map<version_key, memory::entry> versions_;
  undo_entries<std::string, memory::entry> undo_current_;
  undo_entries<version_key, memory::entry> undo_versions_;
};

} // namespace sreh::persistence::in_memory
