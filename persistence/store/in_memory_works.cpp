#include "persistence/store/in_memory_works.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <tuple>

#include "persistence/store/work_codec.hpp"

namespace sreh::persistence::in_memory {

namespace {

sreh::error faulty(std::string message) {
  return {errc::internal, "memory: " + std::move(message)};
}

/// A Work as the stores keep it: its labels in their compact form.
works::work as_stored(works::work w) {
  w.labels = compact_object(w.labels);
  w.fields = compact_object(w.fields);
  return w;
}

} // namespace

std::string work_tables::key_holder(const write_batch& b) const {
  if (!b.create_work || b.create_work->idempotency_key.empty())
    return {};
  auto held = keys_.find(b.create_work->idempotency_key);
  return held == keys_.end() ? std::string{} : held->second;
}

sreh::error work_tables::create(const works::work& w) {
  if (works_.contains(w.id))
    return faulty(fmt::format("insert work {}: a Work with this id exists", w.id));
  put(works_, undo_works_, w.id, std::optional{as_stored(w)});
  if (!w.idempotency_key.empty())
    put(keys_, undo_keys_, w.idempotency_key, std::optional{w.id});
  return {};
}

sreh::error work_tables::update(const works::work& w) {
  auto stored = works_.find(w.id);
  if (stored == works_.end())
    return faulty(fmt::format("update work {}: no such Work", w.id));
  const auto old_key = stored->second.idempotency_key;
  const auto& key = w.idempotency_key;
  if (key != old_key) {
    if (auto held = keys_.find(key); !key.empty() && held != keys_.end())
      return faulty(fmt::format("update work {}: idempotency key '{}' is held by Work {}", w.id,
                                key, held->second));
    if (!old_key.empty())
      put(keys_, undo_keys_, old_key, std::optional<std::string>{});
    if (!key.empty())
      put(keys_, undo_keys_, key, std::optional{w.id});
  }
  put(works_, undo_works_, w.id, std::optional{as_stored(w)});
  return {};
}

sreh::error work_tables::apply(const write_batch& b) {
  if (b.create_work)
    if (auto err = create(*b.create_work))
      return err;
  if (b.update_work)
    if (auto err = update(*b.update_work))
      return err;
  for (const auto& t : b.templates) {
    template_key k{t.name, t.version};
    if (!templates_.contains(k))
      put(templates_, undo_templates_, k, std::optional{t});
  }
  for (const auto& e : b.entities) {
    history_key k{e.id, e.version};
    if (history_.contains(k))
      return faulty(fmt::format("insert history of entity {}: version {} exists", e.id, e.version));
    put(history_, undo_history_, k, std::optional{e});
    put(entities_, undo_entities_, e.id, std::optional{e});
  }
  return {};
}

void work_tables::keep() {
  undo_works_.clear();
  undo_keys_.clear();
  undo_templates_.clear();
  undo_entities_.clear();
  undo_history_.clear();
}

void work_tables::roll_back() {
  restore(history_, undo_history_);
  restore(entities_, undo_entities_);
  restore(templates_, undo_templates_);
  restore(keys_, undo_keys_);
  restore(works_, undo_works_);
}

// -- reads ---------------------------------------------------------------------------------------

std::optional<works::work> work_tables::get_work(std::string_view id) const {
  auto it = works_.find(id);
  return it == works_.end() ? std::optional<works::work>{} : std::optional{it->second};
}

expected<work_page> work_tables::list_works(const work_filter& f) const {
  return filtered_page(f, [this](const std::string& before, int n) {
    std::vector<works::work> rows;
    auto end = before.empty() ? works_.end() : works_.lower_bound(before);
    for (auto it = std::make_reverse_iterator(end);
         it != works_.rend() && static_cast<int>(rows.size()) < n; ++it)
      rows.push_back(it->second);
    return expected<std::vector<works::work>>{std::move(rows)};
  });
}

std::vector<works::work> work_tables::open_works(std::string_view node_id) const {
  std::vector<works::work> out;
  for (const auto& [id, w] : works_)
    if (w.node_id == node_id && !works::is_closed(w.state))
      out.push_back(w);
  std::sort(out.begin(), out.end(), [](const works::work& a, const works::work& b) {
    return std::tie(a.created_at, a.id) < std::tie(b.created_at, b.id);
  });
  return out;
}

std::optional<std::string> work_tables::work_by_key(std::string_view key) const {
  auto it = key.empty() ? keys_.end() : keys_.find(key);
  return it == keys_.end() ? std::optional<std::string>{} : std::optional{it->second};
}

std::optional<works::stored_template> work_tables::get_template(std::string_view name,
                                                                std::string_view version) const {
  auto it = templates_.find(template_key{name, version});
  return it == templates_.end() ? std::optional<works::stored_template>{}
                                : std::optional{it->second};
}

std::vector<world::entity> work_tables::entities() const {
  std::vector<world::entity> out;
  out.reserve(entities_.size());
  for (const auto& [id, e] : entities_)
    out.push_back(e);
  return out;
}

std::optional<world::entity> work_tables::entity(std::string_view id) const {
  auto it = entities_.find(id);
  return it == entities_.end() ? std::optional<world::entity>{} : std::optional{it->second};
}

std::vector<world::entity> work_tables::history(std::string_view id, int limit) const {
  const auto n = static_cast<std::size_t>(clamp_limit(limit, max_history_rows));
  std::vector<world::entity> out;
  const history_key last{std::string{id}, std::numeric_limits<std::int64_t>::max()};
  for (auto it = std::make_reverse_iterator(history_.upper_bound(last));
       it != history_.rend() && it->first.first == id && out.size() < n; ++it)
    out.push_back(it->second);
  return out;
}

} // namespace sreh::persistence::in_memory
