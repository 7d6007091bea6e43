#include "actors/postmortem/postmortem_service.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/base/json.hpp"
#include "core/model/fork_origin.hpp"
#include "core/works/work.hpp"

namespace sreh::actors {

namespace {

/// Who writes a generated postmortem into memory (its versions' author).
constexpr std::string_view generated_by = "sreh";

} // namespace

postmortem_service::postmortem_service(persistence::store& store, memory_service& memory,
                                       outcome::mutating_fn mutating)
  : store_(store), memory_(memory), mutating_(std::move(mutating)) {}

expected<postmortem::run_record> read_run_record(persistence::store& store, run r) {
  auto steps = store.get_steps(r.id);
  if (!steps)
    return steps.error();
  persistence::approval_filter f;
  f.run_id = r.id;
  f.limit = 500;
  std::vector<approval> approvals;
  for (;;) {
    auto page = store.list_approvals(f);
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
  return postmortem::run_record{std::move(r), std::move(*steps), std::move(approvals)};
}

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
  auto rec = read_run_record(store_, run);
  if (!rec)
    return rec.error();
  return postmortem::of_run(rec->r, rec->steps, rec->approvals, mutating_);
}

expected<std::optional<memory::entry>> postmortem_service::remember(std::string_view id) {
  std::lock_guard lk{writing_};
  if (auto r = store_.get_run(std::string{id}); r && r->has_value()) {
    // A fork is a counterfactual (docs/fork.md): an amended result or another policy made it
    // go as it went, so it teaches nothing a later incident could rely on.
    if (fork_origin_of(**r))
      return std::optional<memory::entry>{};
    // A run of a Work whose postmortem is written already (a run that ends just after its Work
    // closed): the Work's tells it.
    if (auto labels = json::parse((**r).labels); labels && labels->IsObject())
      if (auto work = json::string_or(*labels, "work"); !work.empty()) {
        memory::query q;
        q.filter = {{"work", work}};
        q.kind = memory::kind::postmortem;
        q.limit = 1;
        if (auto found = memory_.search(q); found && !found->empty())
          return std::optional<memory::entry>{};
      }
  }
  auto doc = of_run(id);
  if (!doc)
    return doc.error();
  if (doc->causes.empty() && doc->actions.empty())
    return std::optional<memory::entry>{};
  return store_entry(postmortem::as_memory(*doc), "run", std::string{id});
}

expected<std::optional<memory::entry>>
postmortem_service::store_entry(memory::draft draft, const char* label, const std::string& value) {
  memory::query q;
  q.filter = {{label, value}};
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

expected<postmortem::document> postmortem_service::of_work(std::string_view id) {
  auto w = store_.get_work(id);
  if (!w)
    return w.error();
  if (!w->has_value())
    return sreh::error{errc::not_found, fmt::format("work {} not found", id)};
  const auto& work = **w;
  if (!works::is_closed(work.state))
    return sreh::error{errc::conflict,
                       fmt::format("work {} is {}: its postmortem is written when it is resolved "
                                   "or cancelled",
                                   id, works::to_string(work.state))};
  auto timeline = persistence::timeline_of(store_, work.id);
  if (!timeline)
    return timeline.error();
  std::vector<postmortem::run_record> runs;
  for (const auto& run_id : work.runs) {
    auto r = store_.get_run(run_id);
    if (!r)
      return r.error();
    if (!r->has_value() || !is_terminal((**r).state))
      continue; // a run not created, or one still going (cancelled with the Work, ending)
    auto rec = read_run_record(store_, std::move(**r));
    if (!rec)
      return rec.error();
    runs.push_back(std::move(*rec));
  }
  return postmortem::of_work(work, *timeline, runs, mutating_);
}

expected<std::optional<memory::entry>> postmortem_service::remember_work(std::string_view id) {
  std::lock_guard lk{writing_};
  auto doc = of_work(id);
  if (!doc)
    return doc.error();
  if (doc->causes.empty() && doc->actions.empty())
    return std::optional<memory::entry>{};
  auto entry = store_entry(postmortem::as_memory(*doc), "work", std::string{id});
  if (!entry)
    return entry;
  // The Work's postmortem replaces its runs': a later case recalls the whole incident once.
  auto w = store_.get_work(id);
  if (w && w->has_value())
    for (const auto& run_id : (**w).runs) {
      memory::query q;
      q.filter = {{"run", run_id}};
      q.kind = memory::kind::postmortem;
      q.limit = 1;
      auto found = memory_.search(q);
      if (found && !found->empty())
        if (auto gone = memory_.remove(found->front().e.id, generated_by); !gone)
          return gone.error();
    }
  return entry;
}

} // namespace sreh::actors
