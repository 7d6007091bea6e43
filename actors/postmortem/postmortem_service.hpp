#pragma once
// Postmortems of finished runs and closed Works (docs/postmortems.md): generated from the store
// — the run, its steps and its approvals; a Work's timeline and its runs — by core/postmortem,
// and written into long-term memory as kind `postmortem` when the run ends or the Work closes,
// so that a later case like it recalls it. One entry per run (labelled `run=<id>`) or Work
// (`work=<id>`, which replaces its runs' entries): regenerating the same document changes
// nothing, a different one (the knowledge base read it otherwise) is its next version.
//
// Every method blocks on the store: call it from the HTTP handler pool or a blocking pool.

#include <mutex>
#include <optional>
#include <string_view>

#include "actors/memory/memory_service.hpp"
#include "core/base/expected.hpp"
#include "core/postmortem/postmortem.hpp"
#include "persistence/store/store.hpp"

namespace sreh::actors {

/// Run `r` as its postmortem reads it, from `store`: with its steps and its approvals (oldest
/// first). The run need not have ended (a question about a live run reads it so too).
[[nodiscard]] expected<postmortem::run_record> read_run_record(persistence::store& store, run r);

class postmortem_service {
 public:
  /// `mutating` says which tools change something: their calls are the postmortems' actions.
  postmortem_service(persistence::store& store, memory_service& memory,
                     outcome::mutating_fn mutating = {});

  /// The postmortem of the run `id`; `not_found` naming it, `conflict` while it has not ended.
  [[nodiscard]] expected<postmortem::document> of_run(std::string_view id);

  /// Writes the postmortem of the ended run `id` into memory (the entry labelled `run=<id>`:
  /// added, or its next version when the document changed) and returns the entry; none when the
  /// run found no cause and took no action, or is a fork (it teaches nothing a later case could
  /// use).
  [[nodiscard]] expected<std::optional<memory::entry>> remember(std::string_view id);

  /// The postmortem of the Work `id` (its timeline and its runs); `not_found` naming it,
  /// `conflict` while it is open.
  [[nodiscard]] expected<postmortem::document> of_work(std::string_view id);

  /// Writes the postmortem of the closed Work `id` into memory (the entry labelled
  /// `work=<id>`) and deletes its runs' postmortems there: the Work's replaces them. None when it
  /// found no cause and took no action.
  [[nodiscard]] expected<std::optional<memory::entry>> remember_work(std::string_view id);

 private:
  /// Adds `draft` as the entry that `label`=`value` names, or its next version when it changed.
  expected<std::optional<memory::entry>> store_entry(memory::draft draft, const char* label,
                                                     const std::string& value);

  persistence::store& store_;
  memory_service& memory_;
  outcome::mutating_fn mutating_;
  /// One write into memory at a time: a run's entry and its Work's (which deletes the run's)
  /// must not interleave, or the run's could be written after the Work's deleted it.
  std::mutex writing_;
};

} // namespace sreh::actors
