#include "persistence/store/in_memory_memories.hpp"

#include <algorithm>
#include <array>

#include "persistence/store/memory_codec.hpp"

namespace sreh::persistence::in_memory {

namespace {

/// `w` without a common English suffix.
std::string stem(std::string w) {
  static constexpr std::array<std::string_view, 8> suffixes{"ing", "ed", "es", "s",
                                                            "ion", "ly", "er", "y"};
  for (auto s : suffixes)
    if (w.size() > s.size() + 2 && w.ends_with(s))
      return w.substr(0, w.size() - s.size());
  return w;
}

bool labels_hold(const memory::entry& e, const std::map<std::string, std::string>& filter) {
  for (const auto& [k, v] : filter) {
    auto it = e.labels.find(k);
    if (it == e.labels.end() || it->second != v)
      return false;
  }
  return true;
}

/// How many (term, word) pairs of the entry match.
double matches(const memory::entry& e, const std::vector<std::string>& stems) {
  double n = 0;
  for (const auto& word : memory::search_terms(e.text + ' ' + memory::tags_text(e))) {
    const auto w = stem(word);
    for (const auto& t : stems)
      if (w.starts_with(t) || t.starts_with(w))
        ++n;
  }
  return n;
}

} // namespace

sreh::error memory_tables::apply(const write_batch& b) {
  for (const auto& e : b.memories) {
    auto it = current_.find(e.id);
    if (auto err = memory_version_conflict(e, it == current_.end() ? 0 : it->second.version))
      return err;
    put(versions_, undo_versions_, version_key{e.id, e.version}, std::optional{e});
    put(current_, undo_current_, e.id, std::optional{e});
  }
  return {};
}

void memory_tables::keep() {
  undo_current_.clear();
  undo_versions_.clear();
}

void memory_tables::roll_back() {
  restore(versions_, undo_versions_);
  restore(current_, undo_current_);
}

std::vector<memory::candidate> memory_tables::search(const memory::query& q) const {
  std::vector<std::string> stems;
  for (auto& t : memory::search_terms(q.text))
    stems.push_back(stem(std::move(t)));
  std::vector<memory::candidate> out;
  for (const auto& [id, e] : current_) {
    if (e.deleted || (q.kind && e.kind != *q.kind) || !labels_hold(e, q.filter))
      continue;
    const double relevance = stems.empty() ? 0 : matches(e, stems);
    if (!stems.empty() && relevance == 0)
      continue;
    out.push_back({e, relevance});
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    if (a.relevance != b.relevance)
      return a.relevance > b.relevance;
    return a.e.updated_at > b.e.updated_at;
  });
  if (out.size() > static_cast<std::size_t>(memory::candidate_limit(q)))
    out.resize(static_cast<std::size_t>(memory::candidate_limit(q)));
  return out;
}

std::optional<memory::entry> memory_tables::get(std::string_view id) const {
  auto it = current_.find(id);
  return it == current_.end() ? std::nullopt : std::optional{it->second};
}

std::optional<memory::entry> memory_tables::version(std::string_view id, std::int64_t v) const {
  auto it = versions_.find(version_key{std::string{id}, v});
  return it == versions_.end() ? std::nullopt : std::optional{it->second};
}

std::vector<memory::entry> memory_tables::versions(std::string_view id) const {
  std::vector<memory::entry> out;
  for (auto it = versions_.lower_bound(version_key{std::string{id}, 0});
       it != versions_.end() && it->first.first == id; ++it)
    out.push_back(it->second);
  std::reverse(out.begin(), out.end());
  return out;
}

} // namespace sreh::persistence::in_memory
