#pragma once
// The Works aggregate of the in-memory store (in_memory_store.hpp): Works with their idempotency
// keys, template versions, world entities and their history, in ordered maps.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "persistence/store/committer.hpp"
#include "persistence/store/in_memory_undo.hpp"
#include "persistence/store/work_store.hpp"

namespace sreh::persistence::in_memory {

/// The tables of Works and world state. Not thread-safe: the in-memory store guards them with its
/// mutex. What `apply` changed is put back by `roll_back` until `keep` forgets it.
class work_tables {
 public:
  /// The Work that holds the idempotency key of `b.create_work` ("" when none does): then
  /// nothing of the batch is applied.
  [[nodiscard]] std::string key_holder(const write_batch& b) const;
  /// Applies the Work rows of `b`: create_work, update_work, templates, entities. An error
  /// (`internal`: a missing Work, a duplicate id or history version) leaves the rows applied so
  /// far to `roll_back`.
  [[nodiscard]] sreh::error apply(const write_batch& b);
  void keep();
  void roll_back();

  [[nodiscard]] std::optional<works::work> get_work(std::string_view id) const;
  [[nodiscard]] expected<work_page> list_works(const work_filter& f) const;
  [[nodiscard]] std::vector<works::work> open_works(std::string_view node_id) const;
  [[nodiscard]] std::optional<std::string> work_by_key(std::string_view key) const;
  [[nodiscard]] std::optional<works::stored_template> get_template(std::string_view name,
                                                                   std::string_view version) const;
  [[nodiscard]] std::vector<world::entity> entities() const;
  [[nodiscard]] std::optional<world::entity> entity(std::string_view id) const;
  [[nodiscard]] std::vector<world::entity> history(std::string_view id, int limit) const;

 private:
  using template_key = std::pair<std::string, std::string>; // (name, version)
  using history_key = std::pair<std::string, std::int64_t>; // (id, version)

  sreh::error create(const works::work& w);
  sreh::error update(const works::work& w);

  std::map<std::string, works::work, std::less<>> works_; // by id: lists page by id
  std::map<std::string, std::string, std::less<>> keys_;  // idempotency key -> Work id
  std::map<template_key, works::stored_template> templates_;
  std::map<std::string, world::entity, std::less<>> entities_;
  std::map<history_key, world::entity> history_;

  undo_entries<std::string, works::work> undo_works_;
  undo_entries<std::string, std::string> undo_keys_;
  undo_entries<template_key, works::stored_template> undo_templates_;
  undo_entries<std::string, world::entity> undo_entities_;
  undo_entries<history_key, world::entity> undo_history_;
};

} // namespace sreh::persistence::in_memory
