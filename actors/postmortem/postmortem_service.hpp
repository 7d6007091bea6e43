#pragma once
// Postmortems of finished runs (docs/postmortems.md): generated from the store — the run, its
// steps and its approvals — by core/postmortem, and written into long-term memory as kind
// `postmortem` when the run ends, so that a later case like it recalls it. One entry per run
// (labelled `run=<id>`): regenerating the same document changes nothing, a different one (the
// knowledge base read it otherwise) is its next version.
//
// Every method blocks on the store: call it from the HTTP handler pool or a blocking pool.

#include <optional>
#include <string_view>

#include "actors/memory/memory_service.hpp"
#include "core/base/expected.hpp"
#include "core/postmortem/postmortem.hpp"
#include "persistence/store/store.hpp"

namespace sreh::actors {

class postmortem_service {
 public:
  postmortem_service(persistence::store& store, memory_service& memory);

  /// The postmortem of the run `id`; `not_found` naming it, `conflict` while it has not ended.
  [[nodiscard]] expected<postmortem::document> of_run(std::string_view id);

  /// Writes the postmortem of the ended run `id` into memory (the entry labelled `run=<id>`:
  /// added, or its next version when the document changed) and returns the entry; none when the
  /// run found no cause and took no action, or is a fork (it teaches nothing a later case could
  /// use).
  [[nodiscard]] expected<std::optional<memory::entry>> remember(std::string_view id);

 private:
  persistence::store& store_;
  memory_service& memory_;
};

} // namespace sreh::actors
