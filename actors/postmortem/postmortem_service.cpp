#include "actors/postmortem/postmortem_service.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/model/fork_origin.hpp"

namespace sreh::actors {

namespace {

/// Who writes a generated postmortem into memory (its versions' author).
constexpr std::string_view generated_by = "sreh";

} // namespace

postmortem_service::postmortem_service(persistence::store& store, memory_service& memory)
  : store_(store), memory_(memory) {}

expected<postmortem::document> postmortem_service::of_run(std::string_view id) {
  auto r = store_.get_run(std::string{id});
  if (!r)
    return r.error();
  if (!r->has_value())
    return sreh::error{errc::not_found, fmt::format("run {} not found", id)};
  const auto& run = **r;
  if (!is_terminal(run.state))
    return sreh::error{errc::conflict,
                       fmt::format("run {} has not ended (it is {}): its postmortem is written "
                                   "when it ends",
                                   id, to_string(run.state))};
  auto steps = store_.get_steps(run.id);
  if (!steps)
    return steps.error();
  persistence::approval_filter f;
  f.run_id = run.id;
  f.limit = 500;
  std::vector<approval> approvals;
  for (;;) {
    auto page = store_.list_approvals(f);
    if (!page)
      return page.error();
    approvals.insert(approvals.end(), page->approvals.begin(), page->approvals.end());
    if (page->next_cursor.empty())
      break;
    f.before_id = page->next_cursor;
  }
  // The store lists approvals newest first; the document reads them in the order they came.
  std::sort(approvals.begin(), approvals.end(), [](const approval& a, const approval& b) {
    return a.created_at != b.created_at ? a.created_at < b.created_at : a.id < b.id;
  });
  return postmortem::of_run(run, *steps, approvals);
}

expected<std::optional<memory::entry>> postmortem_service::remember(std::string_view id) {
  // A fork is a counterfactual (docs/fork.md): an amended result or another policy made it go
  // as it went, so it teaches nothing a later incident could rely on.
  if (auto r = store_.get_run(std::string{id}); r && r->has_value() && fork_origin_of(**r))
    return std::optional<memory::entry>{};
  auto doc = of_run(id);
  if (!doc)
    return doc.error();
  if (doc->causes.empty() && doc->actions.empty())
    return std::optional<memory::entry>{};
  auto draft = postmortem::as_memory(*doc);
  memory::query q;
  q.filter = {{"run", std::string{id}}};
  q.kind = memory::kind::postmortem;
  q.limit = 1;
  auto found = memory_.search(q);
  if (!found)
    return found.error();
  auto stored = [](expected<memory::entry> e) -> expected<std::optional<memory::entry>> {
    if (!e)
      return e.error();
    return std::optional<memory::entry>{std::move(*e)};
  };
  if (found->empty())
    return stored(memory_.add(std::move(draft), generated_by));
  const auto& current = found->front().e;
  if (current.text == draft.text && current.labels == draft.labels &&
      current.entities == draft.entities)
    return std::optional<memory::entry>{current}; // the same document: nothing to change
  return stored(memory_.edit(current.id, memory::patch{draft.text, draft.labels, draft.entities},
                             generated_by));
}

} // namespace sreh::actors
