#pragma once
// Long-term memory (docs/memory.md): what the team and past runs know — postmortems, resolved
// incidents, operators' notes, runbooks — each with labels and where it came from. Every change
// is a new version of the entry (an edit, a rollback to an old text, a delete as a tombstone);
// the store keeps them all (persistence/store/memory_store.hpp) and each change is an event of
// the audit chain. Pure: no I/O.

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/clock.hpp"
#include "core/base/expected.hpp"
#include "core/base/json.hpp"

namespace sreh::memory {

/// What an entry is.
enum class kind { postmortem, incident, note, runbook };
[[nodiscard]] const char* to_string(kind k);
[[nodiscard]] std::optional<kind> parse_kind(std::string_view s);

/// What made a version.
enum class change { create, edit, rollback, remove };
[[nodiscard]] const char* to_string(change c);
[[nodiscard]] std::optional<change> parse_change(std::string_view s);

/// Where an entry came from: the run or Work it was learnt from (empty for an operator's).
struct provenance {
  std::string run_id;
  std::string work_id;
};

/// One version of an entry. `labels` say what it is about (service, alert, fault, ...);
/// `entities` are the world entities it concerns (same-entity priority in search).
struct entry {
  std::string id; // mem_<ULID>
  memory::kind kind = kind::note;
  std::string text;
  std::map<std::string, std::string> labels;
  std::vector<std::string> entities; // sorted, unique
  provenance from;
  std::int64_t version = 1;
  bool deleted = false; // a tombstone: the newest version of a deleted entry
  std::string author;   // who made this version
  memory::change made_by = change::create;
  std::int64_t restored_from = 0; // rollback: the version whose text this one restores
  timestamp_us created_at = 0;    // of version 1
  timestamp_us updated_at = 0;    // of this version
};

/// Size limits: an entry beyond them is refused with an error naming the field.
inline constexpr std::size_t max_text_bytes = 64 * 1024;
inline constexpr std::size_t max_labels = 32;
inline constexpr std::size_t max_label_key_bytes = 64;
inline constexpr std::size_t max_label_value_bytes = 256;
inline constexpr std::size_t max_entities = 32;
inline constexpr std::size_t max_entity_bytes = 128;

/// What a caller asks to add.
struct draft {
  memory::kind kind = kind::note;
  std::string text;
  std::map<std::string, std::string> labels;
  std::vector<std::string> entities;
  provenance from;
};

/// What an edit changes (absent: kept).
struct patch {
  std::optional<std::string> text;
  std::optional<std::map<std::string, std::string>> labels;
  std::optional<std::vector<std::string>> entities;
};

/// `invalid_argument` naming the field when `d` is empty or over a limit.
[[nodiscard]] sreh::error validate(const draft& d);

/// Version 1 of a new entry.
[[nodiscard]] expected<entry> create(draft d, std::string id, std::string_view author,
                                     timestamp_us now);
/// The next version of `current` with `p` applied; `invalid_argument` for an empty patch or
/// one over a limit, `not_found` for a deleted entry.
[[nodiscard]] expected<entry> edit(const entry& current, const patch& p, std::string_view author,
                                   timestamp_us now);
/// The next version of `current` with the text, labels and entities of `old` (an earlier
/// version of it); a rollback of a deleted entry restores it.
[[nodiscard]] expected<entry> rollback(const entry& current, const entry& old,
                                       std::string_view author, timestamp_us now);
/// The tombstone: the next version, deleted, its text kept in the older versions only.
[[nodiscard]] expected<entry> remove(const entry& current, std::string_view author,
                                     timestamp_us now);

/// The text a search engine indexes beside the entry's text: its kind, label values and entities.
[[nodiscard]] std::string tags_text(const entry& e);

/// `e` in its wire shape (GET /v1/memory/{id}): id, kind, text, labels, entities, version,
/// deleted, author, change, provenance and times.
void write_json(json::writer& w, const entry& e);
/// The members of `e`'s wire shape, into an object being written.
void write_members(json::writer& w, const entry& e);

/// The labels as the stored JSON object, and back (`internal` for another shape).
[[nodiscard]] std::string labels_json(const std::map<std::string, std::string>& labels);
[[nodiscard]] expected<std::map<std::string, std::string>> read_labels(std::string_view json);
/// The entities as the stored JSON array, and back.
[[nodiscard]] std::string entities_json(const std::vector<std::string>& entities);
[[nodiscard]] expected<std::vector<std::string>> read_entities(std::string_view json);

/// A draft from a request body `{"kind","text","labels"?,"entities"?}`, and a patch from
/// `{"text"?,"labels"?,"entities"?}`: `invalid_argument` naming the member.
[[nodiscard]] expected<draft> read_draft(const rapidjson::Value& body);
[[nodiscard]] expected<patch> read_patch(const rapidjson::Value& body);

} // namespace sreh::memory
