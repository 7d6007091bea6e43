// The write path of the PostgreSQL store: one transaction per call to `commit`, one statement
// per table whatever the number of batches (whole columns as array parameters).
#include <pqxx/pqxx>

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "pg_rows.hpp"
#include "pg_sql.hpp"
#include "pg_store.hpp"
#include "sreh/core/logger.hpp"
#include "sreh/persistence/audit.hpp"

namespace sreh::persistence::pg {

namespace {

/// Runs `s` with the finished columns of `cols` (nothing when it has no rows).
pqxx::result exec_columns(pqxx::work& tx, const statement& s, array_columns& cols) {
  if (cols.rows() == 0)
    return {};
  return tx.exec_prepared(s.name, pqxx::prepare::make_dynamic_params(cols.finish()));
}

/// The runs that hold the idempotency keys of the batches' creates, by key.
std::unordered_map<std::string, std::string> key_holders(pqxx::work& tx,
                                                         const std::vector<write_batch>& batches) {
  array_columns keys{1};
  for (const auto& b : batches)
    if (b.create && !b.create->idempotency_key.empty())
      keys.row().text(b.create->idempotency_key);
  std::unordered_map<std::string, std::string> holders;
  for (const auto& row : exec_columns(tx, runs_by_keys, keys))
    holders.emplace(text(row[0]), text(row[1]));
  return holders;
}

/// The rows of one commit, gathered from its batches in order. A row written twice in one
/// commit (a step's intent and outcome, two updates of a run) is written once, with its last
/// value: the same end state as applying the batches one after the other.
struct commit_rows {
  array_columns creates{run_column_count};
  std::vector<const run*> updates;
  std::map<std::pair<std::string_view, std::int64_t>, const step*> steps;
  std::unordered_map<std::string_view, const approval*> approvals;
  array_columns events{event_column_count};
};

/// Why an update of `updates` matched no row: the run does not exist (a bug: `internal`), or
/// another node owns it now (`conflict`: this node's lease expired and a survivor claimed it).
sreh::error missing_updates(pqxx::work& tx, const std::vector<const run*>& updates,
                            const pqxx::result& updated) {
  std::unordered_set<std::string> found;
  for (const auto& row : updated)
    found.insert(text(row[0]));
  array_columns ids{1};
  for (const auto* r : updates)
    if (!found.contains(r->id))
      ids.row().text(r->id);
  std::unordered_map<std::string, std::string> owners;
  for (const auto& row : exec_columns(tx, run_owners, ids))
    owners.emplace(text(row[0]), text(row[1]));
  for (const auto* r : updates) {
    if (found.contains(r->id))
      continue;
    auto o = owners.find(r->id);
    if (o == owners.end())
      return {errc::internal, fmt::format("postgres: update run {}: no such run", r->id)};
    return {errc::conflict,
            fmt::format("postgres: run {} is owned by node '{}', not '{}': this node's lease "
                        "expired and the run was claimed",
                        r->id, o->second, r->node_id)};
  }
  return {errc::internal, "postgres: update runs: fewer rows than expected"};
}

} // namespace

std::vector<commit_result> postgres_store::commit(std::vector<write_batch>& batches) {
  std::vector<commit_result> results(batches.size());
  if (batches.empty())
    return results;
  std::lock_guard lk{write_mtx_};
  applied_.assign(batches.size(), 0);
  auto first_seq = writer_.use("commit", [&](pqxx::connection& c) -> expected<std::int64_t> {
    pqxx::work tx{c, "commit"};
    auto first = apply(tx, batches, results);
    if (first)
      tx.commit();
    return first; // on error the transaction is rolled back when it goes out of scope
  });
  check_applied_ = !first_seq.has_value();
  if (!first_seq) {
    commit_errors_.log(*logger("store"), spdlog::level::warn, "commit of {} batches failed: {}",
                       batches.size(), first_seq.error().message);
    for (std::size_t i = 0; i < batches.size(); ++i) {
      if (applied_[i]) // find_applied took them: give them back
        batches[i].events = std::move(results[i].events);
      results[i] = commit_result{first_seq.error(), {}, {}};
    }
    return results; // the batches are left as they were given
  }
  // Hand the events to the results (no copy), numbered as they were inserted: in batch order,
  // skipping batches that met an existing idempotency key.
  std::int64_t next = *first_seq;
  for (std::size_t i = 0; i < batches.size(); ++i) {
    if (!results[i].existing_run_id.empty() || applied_[i])
      continue; // an applied batch's result already has its events with their stored seqs
    results[i].events = std::move(batches[i].events);
    batches[i].events.clear();
    for (auto& e : results[i].events)
      e.seq = next++;
  }
  return results;
}

void postgres_store::find_applied(pqxx::work& tx, std::vector<write_batch>& batches,
                                  std::vector<commit_result>& results) {
  array_columns ids{1};
  for (const auto& b : batches)
    for (const auto& e : b.events)
      ids.row().text(e.id);
  std::unordered_map<std::string, std::int64_t> stored;
  for (const auto& row : exec_columns(tx, events_by_ids, ids))
    stored.emplace(text(row[0]), row[1].as<std::int64_t>());
  if (stored.empty())
    return;
  for (std::size_t i = 0; i < batches.size(); ++i) {
    auto& evs = batches[i].events;
    const bool all = !evs.empty() && std::all_of(evs.begin(), evs.end(), [&](const event& e) {
      return stored.contains(e.id);
    });
    if (!all)
      continue;
    applied_[i] = 1;
    results[i].events = std::move(evs);
    evs.clear();
    for (auto& e : results[i].events)
      e.seq = stored.at(e.id);
  }
  logger("store")->info("commit: {} batches were in the log already (their earlier commit "
                        "succeeded although its outcome was unknown)",
                        std::count(applied_.begin(), applied_.end(), 1));
}

expected<std::int64_t> postgres_store::apply(pqxx::work& tx, std::vector<write_batch>& batches,
                                             std::vector<commit_result>& results) {
  // Under the lock, the head read here is the last committed one: no other writer can commit
  // until this transaction ends.
  tx.exec_prepared(lock_commit.name);
  std::int64_t seq = 0;
  std::string hash{audit_genesis_hash};
  if (const auto head = tx.exec_prepared(log_head.name); !head.empty()) {
    seq = head[0][0].as<std::int64_t>();
    hash = text(head[0][1]);
  }
  const std::int64_t first_seq = seq + 1;

  // A retry of a batch whose earlier commit did happen (its outcome was unknown) is not applied
  // twice: it succeeds with the events and seqs that the log holds.
  if (check_applied_)
    find_applied(tx, batches, results);

  // Idempotency keys, batch by batch: a create whose key is held (in the database, or by an
  // earlier batch of this commit) skips its whole batch.
  auto holders = key_holders(tx, batches);
  std::unordered_map<std::string_view, std::size_t> created_in; // run id -> creating batch
  for (std::size_t i = 0; i < batches.size(); ++i) {
    const auto& b = batches[i];
    if (applied_[i])
      continue;
    if (b.create) {
      const auto& key = b.create->idempotency_key;
      if (auto h = holders.find(key); !key.empty() && h != holders.end()) {
        results[i].existing_run_id = h->second;
        continue;
      }
      created_in.emplace(b.create->id, i);
      if (!key.empty())
        holders.insert_or_assign(key, b.create->id);
    }
    if (b.update && !b.update->idempotency_key.empty())
      holders.insert_or_assign(b.update->idempotency_key, b.update->id);
  }

  // Rows are written table by table (runs first), so a row that refers to a run created by a
  // later batch would succeed here but not when applied in order: refuse it, as SQLite does.
  auto created_later = [&](const std::string& run_id, std::size_t i) {
    auto c = created_in.find(run_id);
    return c != created_in.end() && c->second > i;
  };
  commit_rows rows;
  std::unordered_map<std::string_view, std::size_t> update_at;
  for (std::size_t i = 0; i < batches.size(); ++i) {
    if (!results[i].existing_run_id.empty() || applied_[i])
      continue;
    const auto& b = batches[i];
    if (b.create)
      add_run(rows.creates, *b.create);
    if (b.update) {
      if (created_later(b.update->id, i))
        return sreh::error{errc::internal,
                           fmt::format("postgres: update run {}: no such run", b.update->id)};
      auto [at, fresh] = update_at.emplace(b.update->id, rows.updates.size());
      if (fresh)
        rows.updates.push_back(&*b.update);
      else
        rows.updates[at->second] = &*b.update;
    }
    for (const auto& s : b.steps) {
      if (created_later(s.run_id, i))
        return sreh::error{errc::internal,
                           fmt::format("postgres: upsert step {}/{}: no such run", s.run_id, s.n)};
      rows.steps.insert_or_assign(std::pair{std::string_view{s.run_id}, s.n}, &s);
    }
    for (const auto& a : b.approvals)
      rows.approvals.insert_or_assign(std::string_view{a.id}, &a);
    for (const auto& e : b.events) {
      const auto h = hasher_.next(hash, ++seq, e);
      if (h.empty())
        return sreh::error{errc::internal,
                           fmt::format("audit chain: SHA-256 of event {} failed", e.id)};
      add_event(rows.events, e, seq, hash, h);
      hash.assign(h);
    }
  }

  exec_columns(tx, insert_runs, rows.creates);
  if (!rows.updates.empty()) {
    array_columns cols{run_column_count};
    for (const auto* r : rows.updates)
      add_run(cols, *r);
    const auto updated = exec_columns(tx, update_runs, cols);
    if (updated.size() != rows.updates.size())
      return missing_updates(tx, rows.updates, updated);
  }
  array_columns steps{step_column_count};
  for (const auto& [key, s] : rows.steps)
    add_step(steps, *s);
  exec_columns(tx, upsert_steps, steps);
  array_columns approvals{approval_column_count};
  for (const auto& [id, a] : rows.approvals)
    add_approval(approvals, *a);
  exec_columns(tx, upsert_approvals, approvals);
  exec_columns(tx, insert_events, rows.events);
  if (rows.events.rows() > 0)
    tx.exec_prepared(notify_commit.name);
  return first_seq;
}

} // namespace sreh::persistence::pg
