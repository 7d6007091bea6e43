#include "persistence/store/in_memory_candidates.hpp"

#include <algorithm>
#include <tuple>

#include "persistence/store/candidate_store.hpp"
#include "persistence/store/paging.hpp"

namespace sreh::persistence::in_memory {

void candidate_tables::apply(const write_batch& b) {
  for (const auto& c : b.candidates)
    put(current_, undo_, c.id, std::optional{c});
}

void candidate_tables::keep() {
  undo_.clear();
}

void candidate_tables::roll_back() {
  restore(current_, undo_);
}

std::optional<evolve::candidate> candidate_tables::get(std::string_view id) const {
  auto it = current_.find(id);
  return it == current_.end() ? std::nullopt : std::optional{it->second};
}

std::vector<evolve::candidate> candidate_tables::list(int limit) const {
  std::vector<const evolve::candidate*> all;
  all.reserve(current_.size());
  for (const auto& [id, c] : current_)
    all.push_back(&c);
  std::sort(all.begin(), all.end(), [](const auto* a, const auto* b) {
    return std::tie(a->created_at, a->id) > std::tie(b->created_at, b->id);
  });
  all.resize(
    std::min(all.size(), static_cast<std::size_t>(clamp_limit(limit, max_candidate_rows))));
  std::vector<evolve::candidate> out;
  out.reserve(all.size());
  for (const auto* c : all)
    out.push_back(*c);
  return out;
}

} // namespace sreh::persistence::in_memory
