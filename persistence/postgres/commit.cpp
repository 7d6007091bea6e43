// The write path of the PostgreSQL store: one transaction per call to `commit`, whole columns as
// array parameters whatever the number of batches. Usually one round trip: the commit function
// (pg_sql.hpp) called with the events hashed after the head this writer committed last. Else, or
// when that head turns out stale, a transaction of one statement per table that reads the head
// under the lock first.
#include <fmt/format.h>
#include <pqxx/pqxx>

#include <algorithm>
#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "core/base/logger.hpp"
#include "persistence/audit/audit.hpp"
#include "persistence/postgres/migrations.hpp"
#include "persistence/postgres/rows.hpp"
#include "persistence/postgres/sql.hpp"
#include "persistence/postgres/store_impl.hpp"
#include "persistence/store/store_impl.hpp"

namespace sreh::persistence::pg {

namespace {

constexpr const char* undefined_function_sqlstate = "42883";

/// Runs `s` with the finished columns of `cols` (nothing when it has no rows).
pqxx::result exec_columns(pqxx::transaction_base& tx, const statement& s, array_columns& cols) {
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

/// The rows of one commit, gathered from its batches in order, as the columns of the write
/// statements. A row written twice in one commit (a step's intent and outcome, two updates of a
/// run) is written once, with its last value: the same end state as applying the batches one
/// after the other.
struct commit_rows {
  array_columns creates{run_column_count};
  array_columns updates{run_column_count};
  array_columns steps{step_column_count};
  array_columns approvals{approval_column_count};
  array_columns events{event_column_count};
  std::int64_t last_seq = 0; // the log's head after this commit
  std::string last_hash;
};

/// Why the commit function refused an update (sqlstate SR409; nothing was written): a run that
/// does not exist (a bug: `internal`), or one that another node owns now (`conflict`: this
/// node's lease expired and a survivor claimed it). Reads the committed owners of the runs that
/// the written batches update (those they create cannot be the cause).
sreh::error fenced_error(pqxx::connection& c, const std::vector<write_batch>& batches,
                         const std::vector<commit_result>& results,
                         const std::vector<char>& applied) {
  std::unordered_set<std::string_view> created;
  std::vector<const run*> updates;
  for (std::size_t i = 0; i < batches.size(); ++i) {
    if (met_held_key(results[i]) || applied[i])
      continue;
    if (batches[i].create)
      created.insert(batches[i].create->id);
    if (batches[i].update)
      updates.push_back(&*batches[i].update);
  }
  std::erase_if(updates, [&](const run* r) { return created.contains(r->id); });
  array_columns ids{1};
  for (const auto* r : updates)
    ids.row().text(r->id);
  pqxx::nontransaction tx{c, "fenced update"};
  std::unordered_map<std::string, std::string> owners;
  for (const auto& row : exec_columns(tx, run_owners, ids))
    owners.emplace(text(row[0]), text(row[1]));
  for (const auto* r : updates) {
    auto o = owners.find(r->id);
    if (o == owners.end())
      return {errc::internal, fmt::format("postgres: update run {}: no such run", r->id)};
    if (o->second != r->node_id)
      return {errc::conflict,
              fmt::format("postgres: run {} is owned by node '{}', not '{}': this node's lease "
                          "expired and the run was claimed",
                          r->id, o->second, r->node_id)};
  }
  return {errc::internal, "postgres: update runs: fewer rows than expected"};
}

/// Creates the commit function again after a call found it missing (dropped, a schema restored
/// without it), under the commit lock.
void recreate_commit_function(pqxx::connection& c) {
  logger("store")->warn("commit: the commit function {} is missing; creating it again",
                        commit_at_once().name);
  pqxx::work tx{c, "create commit function"};
  tx.exec_prepared(lock_commit.name);
  create_commit_function(tx);
  tx.commit();
}

/// The batches that are written: a create (or create_work) whose idempotency key is held (in
/// the database: `holders` (`work_holders`), or by an earlier batch of this commit) skips its
/// whole batch (its result names the holder), and so does a batch found in the log already.
/// Returns the batch creating each run.
std::unordered_map<std::string_view, std::size_t>
skip_held_keys(std::unordered_map<std::string, std::string> holders,
               std::unordered_map<std::string, std::string> work_holders,
               const std::vector<write_batch>& batches, const std::vector<char>& applied,
               std::vector<commit_result>& results) {
  std::unordered_map<std::string_view, std::size_t> created_in;
  for (std::size_t i = 0; i < batches.size(); ++i) {
    const auto& b = batches[i];
    if (applied[i])
      continue;
    if (b.create_work) {
      const auto& key = b.create_work->idempotency_key;
      if (auto h = work_holders.find(key); !key.empty() && h != work_holders.end()) {
        results[i].existing_work_id = h->second;
        continue;
      }
    }
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
    if (b.create_work && !b.create_work->idempotency_key.empty())
      work_holders.insert_or_assign(b.create_work->idempotency_key, b.create_work->id);
  }
  return created_in;
}

/// The parameters of the commit function: the head the events were hashed after, then every
/// column of `rows`.
std::vector<std::string> function_params(commit_rows& rows, std::int64_t head_seq,
                                         const std::string& head_hash) {
  std::vector<std::string> params{std::to_string(head_seq), head_hash};
  params.reserve(static_cast<std::size_t>(commit_at_once().params));
  for (auto* cols : {&rows.creates, &rows.updates, &rows.steps, &rows.approvals, &rows.events})
    for (const auto& c : cols->finish())
      params.push_back(c);
  return params;
}

/// Calls the commit function in `tx` with `rows`, whose events were hashed after the log head
/// (`seq`, `hash`). Returns nothing when it wrote them, else the log's real head (nothing was
/// written). Throws what libpqxx throws: sqlstate SR409 for a fenced update (rolled back), 42883
/// when the function is missing.
std::optional<log_position> write_rows(pqxx::transaction_base& tx, commit_rows& rows,
                                       std::int64_t seq, const std::string& hash) {
  const auto params = function_params(rows, seq, hash);
  const auto r =
    tx.exec_prepared1(commit_at_once_statement, pqxx::prepare::make_dynamic_params(params));
  if (r[0].as<bool>())
    return std::nullopt;
  return log_position{r[1].as<std::int64_t>(),
                      r[2].is_null() ? std::string{audit_genesis_hash} : text(r[2])};
}

/// The rows of the batches to write, their events numbered and hashed after the log head
/// (`seq`, `hash`).
expected<commit_rows> gather(audit_hasher& hasher, const std::vector<write_batch>& batches,
                             const std::vector<commit_result>& results,
                             const std::vector<char>& applied,
                             const std::unordered_map<std::string_view, std::size_t>& created_in,
                             std::int64_t seq, std::string hash) {
  // Rows are written table by table (runs first), so a row that refers to a run created by a
  // later batch would succeed here but not when applied in order: refuse it, as SQLite does.
  auto created_later = [&](const std::string& run_id, std::size_t i) {
    auto c = created_in.find(run_id);
    return c != created_in.end() && c->second > i;
  };
  commit_rows rows;
  std::vector<const run*> updates;
  std::unordered_map<std::string_view, std::size_t> update_at;
  std::map<std::pair<std::string_view, std::int64_t>, const step*> steps;
  std::unordered_map<std::string_view, const approval*> approvals;
  for (std::size_t i = 0; i < batches.size(); ++i) {
    if (met_held_key(results[i]) || applied[i])
      continue;
    const auto& b = batches[i];
    if (b.create)
      add_run(rows.creates, *b.create);
    if (b.update) {
      if (created_later(b.update->id, i))
        return sreh::error{errc::internal,
                           fmt::format("postgres: update run {}: no such run", b.update->id)};
      auto [at, fresh] = update_at.emplace(b.update->id, updates.size());
      if (fresh)
        updates.push_back(&*b.update);
      else
        updates[at->second] = &*b.update;
    }
    for (const auto& s : b.steps) {
      if (created_later(s.run_id, i))
        return sreh::error{errc::internal,
                           fmt::format("postgres: upsert step {}/{}: no such run", s.run_id, s.n)};
      steps.insert_or_assign(std::pair{std::string_view{s.run_id}, s.n}, &s);
    }
    for (const auto& a : b.approvals)
      approvals.insert_or_assign(std::string_view{a.id}, &a);
    for (const auto& e : b.events) {
      const auto h = hasher.next(hash, ++seq, e);
      if (h.empty())
        return sreh::error{errc::internal,
                           fmt::format("audit chain: SHA-256 of event {} failed", e.id)};
      add_event(rows.events, e, seq, hash, h);
      hash.assign(h);
    }
  }
  for (const auto* r : updates)
    add_run(rows.updates, *r);
  for (const auto& [key, s] : steps)
    add_step(rows.steps, *s);
  for (const auto& [id, a] : approvals)
    add_approval(rows.approvals, *a);
  rows.last_seq = seq;
  rows.last_hash = std::move(hash);
  return rows;
}

} // namespace

std::vector<commit_result> postgres_store::commit(std::vector<write_batch>& batches) {
  std::vector<commit_result> results(batches.size());
  if (batches.empty())
    return results;
  std::lock_guard lk{write_mtx_};
  applied_.assign(batches.size(), 0);
  std::optional<expected<std::int64_t>> first_seq;
  if (head_ && !check_applied_ && skip_at_once_ == 0)
    first_seq = commit_in_one_trip(batches, results);
  else if (skip_at_once_ > 0)
    --skip_at_once_;
  if (!first_seq)
    first_seq = writer_.use("commit", [&](pqxx::connection& c) -> expected<std::int64_t> {
      {
        pqxx::work tx{c, "commit"};
        try {
          auto first = apply(tx, batches, results);
          if (first)
            tx.commit();
          return first; // on error the transaction is rolled back when it goes out of scope
        } catch (const pqxx::sql_error& e) {
          if (e.sqlstate() == undefined_function_sqlstate) {
            tx.abort();
            recreate_commit_function(c);
            return sreh::error{errc::unavailable,
                               "postgres: commit: the commit function was missing (created "
                               "again): commit once more"};
          }
          if (e.sqlstate() != commit_fenced_sqlstate)
            throw;
        }
      }
      return fenced_error(c, batches, results, applied_);
    });
  check_applied_ = !first_seq->has_value();
  if (!first_seq->has_value()) {
    head_.reset(); // whatever happened, the next commit reads the head under the lock
    const auto err = first_seq->error();
    commit_errors_.log(*logger("store"), spdlog::level::warn, "commit of {} batches failed: {}",
                       batches.size(), err.message);
    for (std::size_t i = 0; i < batches.size(); ++i) {
      if (applied_[i]) // find_applied took them: give them back
        batches[i].events = std::move(results[i].events);
      results[i] = commit_result{err, {}, {}, {}};
    }
    return results; // the batches are left as they were given
  }
  // Numbered as they were inserted; an applied batch's result already has its events with their
  // stored seqs.
  hand_over_events(batches, results, **first_seq, [&](std::size_t i) { return applied_[i]; });
  return results;
}

std::optional<expected<std::int64_t>>
postgres_store::commit_in_one_trip(std::vector<write_batch>& batches,
                                   std::vector<commit_result>& results) {
  // A create with an idempotency key needs the keys' holders read first, and Work, memory and
  // candidate rows are written by statements of their own: not in one trip.
  for (const auto& b : batches)
    if ((b.create && !b.create->idempotency_key.empty()) || has_work_rows(b) ||
        has_memory_rows(b) || has_candidate_rows(b) || has_message_rows(b))
      return std::nullopt;
  const auto created_in = skip_held_keys({}, {}, batches, applied_, results);
  // Twice at most: with the head this writer committed last, then with the one the function
  // found (another node committed since). Then the locked transaction, and the next commits
  // go that way too for a while: another writer is busy.
  for (int attempt = 0; attempt < 2; ++attempt) {
    // Plain variables, not a structured binding: the lambda below uses them (clang 14, which
    // the fuzz preset builds with, cannot capture bindings).
    const auto seq = head_->first;
    const auto hash = head_->second;
    auto rows = gather(hasher_, batches, results, applied_, created_in, seq, hash);
    if (!rows)
      return rows.error();
    bool by_transaction = false; // nothing written: `apply` does this commit
    using outcome = std::optional<log_position>;
    auto stale = writer_.use("commit", [&](pqxx::connection& c) -> expected<outcome> {
      {
        pqxx::nontransaction tx{c, "commit"};
        try {
          return write_rows(tx, *rows, seq, hash);
        } catch (const pqxx::sql_error& e) {
          const bool fenced = e.sqlstate() == commit_fenced_sqlstate;
          if (!fenced && e.sqlstate() != undefined_function_sqlstate)
            throw;
          by_transaction = true; // fenced: the transaction path says which run and why
          if (fenced)
            return outcome{};
        }
      }
      recreate_commit_function(c);
      return outcome{};
    });
    if (!stale)
      return stale.error();
    if (by_transaction)
      return std::nullopt;
    if (!*stale) {
      head_ = {rows->last_seq, std::move(rows->last_hash)};
      return seq + 1;
    }
    head_ = std::move(**stale);
  }
  skip_at_once_ = 64;
  return std::nullopt;
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

  // A retry of a batch whose earlier commit did happen (its outcome was unknown) is not applied
  // twice: it succeeds with the events and seqs that the log holds.
  if (check_applied_)
    find_applied(tx, batches, results);

  const auto created_in = skip_held_keys(key_holders(tx, batches), work_key_holders(tx, batches),
                                         batches, applied_, results);
  auto rows = gather(hasher_, batches, results, applied_, created_in, seq, hash);
  if (!rows)
    return rows.error();
  for (std::size_t i = 0; i < batches.size(); ++i) {
    if (met_held_key(results[i]) || applied_[i])
      continue;
    if (auto err = write_work_rows(tx, batches[i]))
      return err;
    if (auto err = write_memory_rows(tx, batches[i]))
      return err;
    if (auto err = write_candidate_rows(tx, batches[i]))
      return err;
    if (auto err = write_message_rows(tx, batches[i]))
      return err;
  }
  if (write_rows(tx, *rows, seq, hash)) // the head was read under the lock: never stale
    return sreh::error{errc::internal, "postgres: commit: the log head moved under the lock"};
  head_ = {rows->last_seq, std::move(rows->last_hash)}; // the commit's caller drops it on failure
  return seq + 1;
}

} // namespace sreh::persistence::pg
