// The write path of the SQLite store: one transaction per call to `commit`.
#include <fmt/format.h>

#include "core/base/logger.hpp"
#include "persistence/sqlite/rows.hpp"
#include "persistence/sqlite/store_impl.hpp"
#include "persistence/sqlite/work_rows.hpp"
#include "persistence/store/store_impl.hpp"

namespace sreh::persistence::sqlite {

namespace {

/// Runs a statement that returns no rows.
sreh::error run_done(connection& c, stmt_use& q, std::string_view op) {
  if (q.step() != SQLITE_DONE)
    return c.last_error(op);
  return {};
}

sreh::error exec_cached(connection& c, const char* sql, std::string_view op) {
  auto* stmt = c.cached(sql);
  if (stmt == nullptr)
    return c.last_error(op);
  stmt_use q{stmt};
  return run_done(c, q, op);
}

} // namespace

std::vector<commit_result> sqlite_store::commit(std::vector<write_batch>& batches) {
  std::vector<commit_result> results(batches.size());
  if (batches.empty())
    return results;
  check_may_block("sqlite", "commit");
  std::lock_guard lk{write_mtx_};
  auto& c = *writer_;
  log_head head = head_;
  auto err = exec_cached(c, sql_begin, "begin");
  if (!err)
    err = apply(batches, results, head);
  if (!err)
    err = exec_cached(c, sql_commit, "commit");
  if (err) {
    if (sqlite3_get_autocommit(c.db()) == 0)
      (void)exec_cached(c, sql_rollback, "rollback");
    logger("store")->warn("commit of {} batches failed: {}", batches.size(), err.message);
    for (auto& r : results)
      r = commit_result{err, {}, {}, {}};
    return results; // the batches are left as they were given
  }
  hand_over_events(batches, results, head_.seq + 1); // numbered as they were inserted
  head_ = std::move(head);
  return results;
}

sreh::error sqlite_store::apply(std::vector<write_batch>& batches,
                                std::vector<commit_result>& results, log_head& head) {
  for (std::size_t i = 0; i < batches.size(); ++i)
    if (auto err = apply_one(batches[i], results[i], head))
      return err;
  return {};
}

sreh::error sqlite_store::apply_one(write_batch& b, commit_result& r, log_head& head) {
  auto& c = *writer_;
  if (b.create_work) {
    // Sees the rows of earlier batches of this transaction too: same connection.
    auto holder = work_key_holder(c, b.create_work->idempotency_key);
    if (!holder)
      return holder.error();
    if (!holder->empty()) {
      r.existing_work_id = std::move(*holder);
      return {};
    }
  }
  if (b.create) {
    if (!b.create->idempotency_key.empty()) {
      // Sees the rows of earlier batches of this transaction too: same connection.
      auto* stmt = c.cached(sql_run_by_key);
      if (stmt == nullptr)
        return c.last_error("find idempotency key");
      stmt_use q{stmt};
      q.bind(1, b.create->idempotency_key);
      const int rc = q.step();
      if (rc == SQLITE_ROW) {
        r.existing_run_id = q.text(0);
        return {};
      }
      if (rc != SQLITE_DONE)
        return c.last_error("find idempotency key");
    }
    auto* stmt = c.cached(sql_insert_run);
    if (stmt == nullptr)
      return c.last_error("insert run");
    stmt_use q{stmt};
    bind_run(q, *b.create);
    if (q.step() != SQLITE_DONE)
      return c.last_error(fmt::format("insert run {}", b.create->id));
  }
  if (b.update) {
    auto* stmt = c.cached(sql_update_run);
    if (stmt == nullptr)
      return c.last_error("update run");
    stmt_use q{stmt};
    bind_run(q, *b.update);
    if (q.step() != SQLITE_DONE)
      return c.last_error(fmt::format("update run {}", b.update->id));
    if (sqlite3_changes(c.db()) != 1)
      return {errc::internal,
              fmt::format("sqlite: update run {}: no such run ({})", b.update->id, c.path())};
  }
  if (!b.steps.empty()) {
    auto* stmt = c.cached(sql_upsert_step);
    if (stmt == nullptr)
      return c.last_error("upsert step");
    for (const auto& s : b.steps) {
      stmt_use q{stmt};
      bind_step(q, s);
      if (q.step() != SQLITE_DONE)
        return c.last_error(fmt::format("upsert step {}/{}", s.run_id, s.n));
    }
  }
  if (!b.approvals.empty()) {
    auto* stmt = c.cached(sql_upsert_approval);
    if (stmt == nullptr)
      return c.last_error("upsert approval");
    for (const auto& a : b.approvals) {
      stmt_use q{stmt};
      bind_approval(q, a);
      if (q.step() != SQLITE_DONE)
        return c.last_error(fmt::format("upsert approval {}", a.id));
    }
  }
  if (auto err = write_work_rows(c, b))
    return err;
  if (auto err = write_memory_rows(c, b))
    return err;
  if (auto err = write_candidate_rows(c, b))
    return err;
  if (auto err = write_message_rows(c, b))
    return err;
  return append_events(b.events, head);
}

sreh::error sqlite_store::append_events(const std::vector<event>& events, log_head& head) {
  if (events.empty())
    return {};
  auto& c = *writer_;
  auto* stmt = c.cached(sql_insert_event);
  if (stmt == nullptr)
    return c.last_error("insert event");
  for (const auto& e : events) {
    const auto seq = head.seq + 1;
    const auto hash = hasher_.next(head.hash, seq, e);
    if (hash.empty())
      return {errc::internal, fmt::format("audit chain: SHA-256 of event {} failed", e.id)};
    stmt_use q{stmt};
    bind_event(q, e, seq);
    q.bind(8, head.hash).bind(9, hash);
    if (q.step() != SQLITE_DONE)
      return c.last_error(fmt::format("insert event {}", e.id));
    head.seq = seq;
    head.hash.assign(hash);
  }
  return {};
}

} // namespace sreh::persistence::sqlite
