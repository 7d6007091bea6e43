// The PostgreSQL store: opening, and the read methods (each one autocommit statement on a
// pooled connection).
#include <fmt/format.h>
#include <pqxx/pqxx>

#include <type_traits>

#include "core/base/logger.hpp"
#include "persistence/postgres/migrations.hpp"
#include "persistence/postgres/rows.hpp"
#include "persistence/postgres/sql.hpp"
#include "persistence/postgres/store_impl.hpp"
#include "persistence/store/paging.hpp"
#include "persistence/store/store_impl.hpp"

namespace sreh::persistence {

namespace pg {

namespace {

constexpr int any_rank = 1'000; // above every role's rank: no role filter

} // namespace

postgres_store::postgres_store(const postgres_options& opts)
  : schema_(opts.schema), writer_(opts.url, opts.schema, writer_planner_settings),
    readers_(opts.url, opts.schema, opts.pool_size), cluster_conn_(opts.url, opts.schema) {}

sreh::error postgres_store::open() {
  std::lock_guard lk{write_mtx_};
  auto done = writer_.use("migrate", [this](pqxx::connection& c) -> expected<bool> {
    if (auto err = migrate(c, schema_))
      return err;
    return true;
  });
  return done ? sreh::error{} : done.error();
}

expected<std::optional<run>> postgres_store::get_run(std::string_view id) {
  return first_row(collect<run>(readers_, "get run", pg::get_run, read_run, std::string{id}));
}

expected<run_page> postgres_store::list_runs(const run_filter& f) {
  const page_window window{f.limit};
  auto rows = f.state ? collect<run>(readers_, "list runs", list_runs_state, read_run,
                                     window.fetch(), f.before_id, std::string{to_string(*f.state)})
                      : collect<run>(readers_, "list runs", pg::list_runs, read_run, window.fetch(),
                                     f.before_id);
  return make_page(window, std::move(rows), &run_page::runs);
}

expected<std::vector<step>> postgres_store::get_steps(std::string_view run_id) {
  return collect<step>(readers_, "get steps", pg::get_steps, read_step, std::string{run_id});
}

expected<std::vector<event>> postgres_store::read_events(const event_filter& f) {
  const int limit = clamp_limit(f.limit, max_event_rows);
  if (f.run_id.empty())
    return collect<event>(readers_, "read events", pg::read_events, read_event, f.after_seq, limit);
  return collect<event>(readers_, "read events", read_run_events, read_event, f.after_seq, limit,
                        f.run_id);
}

expected<std::vector<run>> postgres_store::unfinished_runs(std::string_view node_id) {
  return collect<run>(readers_, "unfinished runs", pg::unfinished_runs, read_run,
                      std::string{node_id});
}

expected<std::optional<std::string>> postgres_store::find_by_idempotency_key(std::string_view key) {
  if (key.empty())
    return std::optional<std::string>{};
  return first_row(collect<std::string>(
    readers_, "find by idempotency key", run_by_key,
    [](const pqxx::row& r) {
      return std::string{r[0].c_str(), r[0].size()};
    },
    std::string{key}));
}

expected<std::optional<approval>> postgres_store::get_approval(std::string_view id) {
  return first_row(
    collect<approval>(readers_, "get approval", pg::get_approval, read_approval, std::string{id}));
}

expected<approval_page> postgres_store::list_approvals(const approval_filter& f) {
  const page_window window{f.limit};
  const auto& s = !f.run_id.empty() ? list_approvals_run
                  : f.state         ? list_approvals_state
                                    : pg::list_approvals;
  const std::string state = f.state ? to_string(*f.state) : "";
  const int rank = f.role.empty() ? any_rank : role_rank(f.role);
  auto rows = collect<approval>(readers_, "list approvals", s, read_approval, window.fetch(),
                                f.before_id, state, f.run_id, rank);
  return make_page(window, std::move(rows), &approval_page::approvals);
}

expected<std::vector<approval>> postgres_store::pending_approvals() {
  return collect<approval>(readers_, "pending approvals", pg::pending_approvals, read_approval);
}

expected<std::optional<approval>> postgres_store::approval_for_step(std::string_view run_id,
                                                                    std::int64_t n) {
  return first_row(collect<approval>(readers_, "approval for step", pg::approval_for_step,
                                     read_approval, std::string{run_id}, n));
}

expected<std::vector<step>> postgres_store::rate_counted_tool_steps(timestamp_us since) {
  return collect<step>(readers_, "rate counted tool steps", pg::rate_counted_tool_steps, read_step,
                       since);
}

expected<store_stats> postgres_store::stats() {
  auto rows = collect<store_stats>(readers_, "stats", pg::stats, [](const pqxx::row& r) {
    return store_stats{r[0].as<std::int64_t>(), r[1].as<std::int64_t>(), r[2].as<std::int64_t>(),
                       r[3].as<std::int64_t>()};
  });
  if (!rows)
    return rows.error();
  return rows->front();
}

sreh::error postgres_store::ping() {
  auto rows =
    collect<int>(readers_, "ping", pg::ping, [](const pqxx::row& r) { return r[0].as<int>(); });
  return rows ? sreh::error{} : rows.error();
}

} // namespace pg

// -- opening -------------------------------------------------------------------------------------

int postgres_schema_version() {
  return pg::last_schema_version();
}

expected<store_ptr> open_postgres_store(const postgres_options& opts) {
  if (opts.url.empty())
    return sreh::error{errc::invalid_argument, "postgres: url is required"};
  if (opts.pool_size < 1 || opts.pool_size > 64)
    return sreh::error{errc::invalid_argument,
                       fmt::format("postgres: pool_size {}: expected 1..64", opts.pool_size)};
  auto st = std::make_unique<pg::postgres_store>(opts);
  if (auto err = st->open())
    return err;
  if (auto err = st->ping())
    return err;
  logger("store")->info("postgres store {} opened (schema {}, version {}, {} readers)",
                        pg::describe_url(opts.url), opts.schema.empty() ? "default" : opts.schema,
                        postgres_schema_version(), opts.pool_size);
  return store_ptr{std::move(st)};
}

} // namespace sreh::persistence
