// The in-memory store: ordered maps for the tables, a vector for the event log, and an undo log
// that makes a commit all or nothing.
#include "persistence/store/in_memory_store.hpp"

#include <algorithm>
#include <functional>
#include <limits>
#include <tuple>

#include "persistence/store/approval_codec.hpp"
#include "persistence/store/in_memory_contents.hpp"
#include "persistence/store/store_impl.hpp"

namespace sreh::persistence {

using in_memory::put;
using in_memory::restore;
using in_memory::undo_entries;

namespace {

using in_memory::chained_event;
using in_memory::read_locked;
using in_memory::step_key;

sreh::error faulty(std::string message) {
  return {errc::internal, "memory: " + std::move(message)};
}

/// True for a step that rate limits count as having succeeded since `since`.
bool counted_success(const step& s, timestamp_us since) {
  return s.kind == step_kind::tool && s.state == step_state::succeeded && s.finished_at >= since;
}

/// A copy of the row of `key` in `rows`, if any.
template <class Map>
std::optional<typename Map::mapped_type> row_of(const Map& rows, std::string_view key) {
  auto it = rows.find(key);
  return it == rows.end() ? std::nullopt : std::optional{it->second};
}

} // namespace

sreh::error in_memory_store::contents::create(const run& r, commit_result& res, undo_log& undo) {
  const auto& key = r.idempotency_key;
  if (auto held = keys.find(key); !key.empty() && held != keys.end()) {
    res.existing_run_id = held->second;
    return {};
  }
  if (runs.contains(r.id))
    return faulty(fmt::format("insert run {}: a run with this id exists", r.id));
  put(runs, undo.runs, r.id, std::optional{r});
  if (!key.empty())
    put(keys, undo.keys, key, std::optional{r.id});
  return {};
}

sreh::error in_memory_store::contents::update(const run& r, undo_log& undo) {
  auto stored = runs.find(r.id);
  if (stored == runs.end())
    return faulty(fmt::format("update run {}: no such run", r.id));
  const auto old_key = stored->second.idempotency_key;
  const auto& key = r.idempotency_key;
  if (key != old_key) {
    if (auto held = keys.find(key); !key.empty() && held != keys.end())
      return faulty(fmt::format("update run {}: idempotency key '{}' is held by run {}", r.id, key,
                                held->second));
    if (!old_key.empty())
      put(keys, undo.keys, old_key, std::optional<std::string>{});
    if (!key.empty())
      put(keys, undo.keys, key, std::optional{r.id});
  }
  put(runs, undo.runs, r.id, std::optional{r});
  return {};
}

sreh::error in_memory_store::contents::append(const event& e) {
  if (event_ids.contains(e.id))
    return faulty(fmt::format("insert event {}: an event with this id exists", e.id));
  const auto seq = static_cast<std::int64_t>(events.size()) + 1;
  auto prev = head_hash();
  const auto hash = hasher.next(prev, seq, e);
  if (hash.empty())
    return faulty(fmt::format("audit chain: SHA-256 of event {} failed", e.id));
  chained_event c{e, std::move(prev), std::string{hash}};
  c.e.seq = seq;
  events.push_back(std::move(c));
  event_ids.insert(e.id);
  return {};
}

sreh::error in_memory_store::contents::apply(const write_batch& b, commit_result& res,
                                             undo_log& undo) {
  if (res.existing_work_id = works.key_holder(b); !res.existing_work_id.empty())
    return {}; // a held key skips the whole batch
  if (b.create) {
    if (auto err = create(*b.create, res, undo); err || !res.existing_run_id.empty())
      return err; // a held key skips the whole batch
  }
  if (b.update)
    if (auto err = update(*b.update, undo))
      return err;
  for (const auto& s : b.steps) {
    if (!runs.contains(s.run_id)) // the other stores' foreign key
      return faulty(fmt::format("upsert step {}/{}: no such run", s.run_id, s.n));
    put(steps, undo.steps, step_key{s.run_id, s.n}, std::optional{s});
  }
  for (const auto& a : b.approvals)
    put(approvals, undo.approvals, a.id, std::optional{a});
  if (auto err = works.apply(b))
    return err;
  if (auto err = memories.apply(b))
    return err;
  candidates.apply(b);
  if (auto err = messages.apply(b))
    return err;
  for (const auto& e : b.events)
    if (auto err = append(e))
      return err;
  return {};
}

void in_memory_store::contents::roll_back(undo_log& undo) {
  for (auto i = undo.events; i < events.size(); ++i)
    event_ids.erase(events[i].e.id);
  events.resize(undo.events);
  works.roll_back();
  memories.roll_back();
  candidates.roll_back();
  messages.roll_back();
  restore(approvals, undo.approvals);
  restore(steps, undo.steps);
  restore(keys, undo.keys);
  restore(runs, undo.runs);
}

// -- store ---------------------------------------------------------------------------------------

in_memory_store::in_memory_store() : c_(std::make_shared<contents>()) {}

in_memory_store::in_memory_store(std::shared_ptr<contents> c) : c_(std::move(c)) {}

in_memory_store::~in_memory_store() = default;

store_ptr make_in_memory_store() {
  return std::make_unique<in_memory_store>();
}

void in_memory_store::fail_with(sreh::error err) {
  std::lock_guard lk{c_->mtx};
  c_->failure = std::move(err);
}

std::string in_memory_store::last_hash() const {
  std::lock_guard lk{c_->mtx};
  return c_->head_hash();
}

std::vector<commit_result> in_memory_store::commit(std::vector<write_batch>& batches) {
  std::vector<commit_result> results(batches.size());
  if (batches.empty())
    return results;
  std::lock_guard lk{c_->mtx};
  contents::undo_log undo;
  undo.events = c_->events.size();
  sreh::error err = c_->failure;
  for (std::size_t i = 0; i < batches.size() && !err; ++i)
    err = c_->apply(batches[i], results[i], undo);
  if (err) {
    c_->roll_back(undo);
    for (auto& r : results)
      r = commit_result{err, {}, {}, {}};
    return results; // the batches are left as they were given
  }
  c_->works.keep();
  c_->memories.keep();
  c_->candidates.keep();
  c_->messages.keep();
  // numbered as they were appended
  hand_over_events(batches, results, static_cast<std::int64_t>(undo.events) + 1);
  return results;
}

// -- runs, steps, events -------------------------------------------------------------------------

expected<std::optional<run>> in_memory_store::get_run(std::string_view id) {
  return read_locked(*c_, [&] { return row_of(c_->runs, id); });
}

expected<run_page> in_memory_store::list_runs(const run_filter& f) {
  const page_window window{f.limit};
  std::lock_guard lk{c_->mtx};
  if (c_->failure)
    return c_->failure;
  run_page page;
  auto end = f.before_id.empty() ? c_->runs.end() : c_->runs.lower_bound(f.before_id);
  for (auto it = std::make_reverse_iterator(end);
       it != c_->runs.rend() && static_cast<int>(page.runs.size()) < window.fetch(); ++it)
    if (!f.state || it->second.state == *f.state)
      page.runs.push_back(it->second);
  page.next_cursor = window.close(page.runs);
  return page;
}

expected<std::vector<step>> in_memory_store::get_steps(std::string_view run_id) {
  std::lock_guard lk{c_->mtx};
  if (c_->failure)
    return c_->failure;
  std::vector<step> out;
  const step_key first{std::string{run_id}, std::numeric_limits<std::int64_t>::min()};
  for (auto it = c_->steps.lower_bound(first); it != c_->steps.end() && it->first.first == run_id;
       ++it)
    out.push_back(it->second);
  return out;
}

expected<std::vector<event>> in_memory_store::read_events(const event_filter& f) {
  const auto limit = static_cast<std::size_t>(clamp_limit(f.limit, max_event_rows));
  std::lock_guard lk{c_->mtx};
  if (c_->failure)
    return c_->failure;
  std::vector<event> out;
  const auto& log = c_->events;
  // events[i] has seq i + 1: the first after `after_seq` is at index after_seq.
  const auto from = static_cast<std::size_t>(
    std::clamp<std::int64_t>(f.after_seq, 0, static_cast<std::int64_t>(log.size())));
  for (auto i = from; i < log.size() && out.size() < limit; ++i)
    if (f.run_id.empty() || log[i].e.run_id == f.run_id)
      out.push_back(log[i].e);
  return out;
}

expected<std::vector<run>> in_memory_store::unfinished_runs(std::string_view node_id) {
  std::lock_guard lk{c_->mtx};
  if (c_->failure)
    return c_->failure;
  std::vector<run> out;
  for (const auto& [id, r] : c_->runs)
    if (r.node_id == node_id && !is_terminal(r.state))
      out.push_back(r);
  std::sort(out.begin(), out.end(), [](const run& a, const run& b) {
    return std::tie(a.created_at, a.id) < std::tie(b.created_at, b.id);
  });
  return out;
}

expected<std::optional<std::string>>
in_memory_store::find_by_idempotency_key(std::string_view key) {
  return read_locked(
    *c_, [&] { return key.empty() ? std::optional<std::string>{} : row_of(c_->keys, key); });
}

expected<std::vector<step>> in_memory_store::rate_counted_tool_steps(timestamp_us since) {
  std::lock_guard lk{c_->mtx};
  if (c_->failure)
    return c_->failure;
  auto waits = [this](const std::string& run_id) {
    auto r = c_->runs.find(run_id);
    return r != c_->runs.end() && r->second.state == run_state::waiting;
  };
  std::vector<step> succeeded;
  std::vector<step> running;
  for (const auto& [key, s] : c_->steps) {
    if (counted_success(s, since))
      succeeded.push_back(s);
    else if (s.kind == step_kind::tool && s.state == step_state::intent && s.started_at >= since &&
             !waits(s.run_id))
      running.push_back(s);
  }
  // The map is ordered by (run_id, n): a stable sort by time keeps that order within a time.
  std::stable_sort(succeeded.begin(), succeeded.end(),
                   [](const step& a, const step& b) { return a.finished_at < b.finished_at; });
  std::stable_sort(running.begin(), running.end(),
                   [](const step& a, const step& b) { return a.started_at < b.started_at; });
  succeeded.insert(succeeded.end(), running.begin(), running.end());
  return succeeded;
}

expected<store_stats> in_memory_store::stats() {
  std::lock_guard lk{c_->mtx};
  if (c_->failure)
    return c_->failure;
  const auto events = static_cast<std::int64_t>(c_->events.size());
  return store_stats{static_cast<std::int64_t>(c_->runs.size()),
                     static_cast<std::int64_t>(c_->steps.size()), events, events};
}

// -- approvals -----------------------------------------------------------------------------------

expected<std::optional<approval>> in_memory_store::get_approval(std::string_view id) {
  return read_locked(*c_, [&] { return row_of(c_->approvals, id); });
}

expected<approval_page> in_memory_store::list_approvals(const approval_filter& f) {
  const page_window window{f.limit};
  auto keeps = [&f, rank = role_rank(f.role)](const approval& a) {
    return (!f.state || a.state == *f.state) && (f.run_id.empty() || a.run_id == f.run_id) &&
           (f.role.empty() || rank >= needed_rank(a.roles));
  };
  std::lock_guard lk{c_->mtx};
  if (c_->failure)
    return c_->failure;
  approval_page page;
  auto& all = c_->approvals;
  auto end = f.before_id.empty() ? all.end() : all.lower_bound(f.before_id);
  for (auto it = std::make_reverse_iterator(end);
       it != all.rend() && static_cast<int>(page.approvals.size()) < window.fetch(); ++it)
    if (keeps(it->second))
      page.approvals.push_back(it->second);
  page.next_cursor = window.close(page.approvals);
  return page;
}

expected<std::vector<approval>> in_memory_store::pending_approvals() {
  std::lock_guard lk{c_->mtx};
  if (c_->failure)
    return c_->failure;
  std::vector<approval> out;
  for (const auto& [id, a] : c_->approvals)
    if (a.state == approval_state::pending)
      out.push_back(a);
  std::stable_sort(out.begin(), out.end(), [](const approval& a, const approval& b) {
    return a.created_at < b.created_at; // ties stay in id order
  });
  return out;
}

expected<std::optional<approval>> in_memory_store::approval_for_step(std::string_view run_id,
                                                                     std::int64_t n) {
  std::lock_guard lk{c_->mtx};
  if (c_->failure)
    return c_->failure;
  const approval* newest = nullptr;
  for (const auto& [id, a] : c_->approvals)
    if (a.run_id == run_id && a.step_n == n &&
        (newest == nullptr ||
         std::tie(a.created_at, a.id) > std::tie(newest->created_at, newest->id)))
      newest = &a;
  return newest == nullptr ? std::optional<approval>{} : std::optional<approval>{*newest};
}

// -- Works, world state ---------------------------------------------------------------------------

expected<std::optional<works::work>> in_memory_store::get_work(std::string_view id) {
  return read_locked(*c_, [&] { return c_->works.get_work(id); });
}

expected<work_page> in_memory_store::list_works(const work_filter& f) {
  return read_locked(*c_, [&] { return c_->works.list_works(f); });
}

expected<std::vector<works::work>> in_memory_store::open_works(std::string_view node_id) {
  return read_locked(*c_, [&] { return c_->works.open_works(node_id); });
}

expected<std::optional<std::string>>
in_memory_store::work_by_idempotency_key(std::string_view key) {
  return read_locked(*c_, [&] { return c_->works.work_by_key(key); });
}

expected<std::optional<works::stored_template>>
in_memory_store::get_template(std::string_view name, std::string_view version) {
  return read_locked(*c_, [&] { return c_->works.get_template(name, version); });
}

expected<std::vector<world::entity>> in_memory_store::world_entities() {
  return read_locked(*c_, [&] { return c_->works.entities(); });
}

expected<std::optional<world::entity>> in_memory_store::world_entity(std::string_view id) {
  return read_locked(*c_, [&] { return c_->works.entity(id); });
}

expected<std::vector<world::entity>> in_memory_store::entity_history(std::string_view id,
                                                                     int limit) {
  return read_locked(*c_, [&] { return c_->works.history(id, limit); });
}

// -- relay offsets, liveness ---------------------------------------------------------------------

expected<std::int64_t> in_memory_store::relay_offset(std::string_view name) {
  return read_locked(*c_, [&] { return row_of(c_->relay_offsets, name).value_or(0); });
}

sreh::error in_memory_store::set_relay_offset(std::string_view name, std::int64_t seq) {
  std::lock_guard lk{c_->mtx};
  if (c_->failure)
    return c_->failure;
  c_->relay_offsets.insert_or_assign(std::string{name}, seq);
  return {};
}

sreh::error in_memory_store::ping() {
  std::lock_guard lk{c_->mtx};
  return c_->failure;
}

// -- long-term memory ----------------------------------------------------------------------------

expected<std::vector<memory::candidate>> in_memory_store::search_memories(const memory::query& q) {
  return read_locked(*c_, [&] { return c_->memories.search(q); });
}

expected<std::optional<memory::entry>> in_memory_store::get_memory(std::string_view id) {
  return read_locked(*c_, [&] { return c_->memories.get(id); });
}

expected<std::optional<memory::entry>> in_memory_store::memory_version(std::string_view id,
                                                                       std::int64_t version) {
  return read_locked(*c_, [&] { return c_->memories.version(id, version); });
}

expected<std::vector<memory::entry>> in_memory_store::memory_versions(std::string_view id) {
  return read_locked(*c_, [&] { return c_->memories.versions(id); });
}

// -- the evolution gate's candidates -------------------------------------------------------------

expected<std::optional<evolve::candidate>> in_memory_store::get_candidate(std::string_view id) {
  return read_locked(*c_, [&] { return c_->candidates.get(id); });
}

expected<std::vector<evolve::candidate>> in_memory_store::list_candidates(int limit) {
  return read_locked(*c_, [&] { return c_->candidates.list(limit); });
}

} // namespace sreh::persistence
