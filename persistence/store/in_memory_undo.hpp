#pragma once
// The undo log of the in-memory store (in_memory_store.cpp, in_memory_works.cpp): what a commit
// changed in an ordered map, to put back when one of its batches fails.

#include <optional>
#include <utility>
#include <vector>

namespace sreh::persistence::in_memory {

/// The value a key had before a commit changed it (none: the key was absent).
template <class Key, class Value>
using undo_entries = std::vector<std::pair<Key, std::optional<Value>>>;

/// Sets `m[k]` to `v` (erases `k` when `v` is empty), remembering the old value in `undo`.
template <class Map, class Key, class Value>
void put(Map& m, undo_entries<Key, Value>& undo, const Key& k, std::optional<Value> v) {
  auto it = m.find(k);
  undo.emplace_back(k, it == m.end() ? std::nullopt : std::optional<Value>{it->second});
  if (v)
    m.insert_or_assign(k, std::move(*v));
  else if (it != m.end())
    m.erase(it);
}

/// Puts back what `undo` remembers, newest first, and forgets it.
template <class Map, class Key, class Value>
void restore(Map& m, undo_entries<Key, Value>& undo) {
  for (auto it = undo.rbegin(); it != undo.rend(); ++it) {
    if (it->second)
      m.insert_or_assign(it->first, std::move(*it->second));
    else
      m.erase(it->first);
  }
  undo.clear();
}

} // namespace sreh::persistence::in_memory
