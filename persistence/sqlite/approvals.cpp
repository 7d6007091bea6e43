// Approvals in the SQLite store: the role rule as an SQL function and the read methods (the row
// mapping is rows.cpp's).
#include <fmt/format.h>

#include "persistence/sqlite/rows.hpp"
#include "persistence/sqlite/store_impl.hpp"
#include "persistence/store/approval_codec.hpp"
#include "persistence/store/paging.hpp"
#include "persistence/store/store_impl.hpp"

namespace sreh::persistence::sqlite {

namespace {

/// sreh_may_decide(roles_json, role): see register_approval_functions.
void may_decide(sqlite3_context* ctx, int, sqlite3_value** argv) {
  const auto* roles_p = sqlite3_value_text(argv[0]);
  const auto* role_p = sqlite3_value_text(argv[1]);
  if (roles_p == nullptr || role_p == nullptr) {
    sqlite3_result_int(ctx, 0);
    return;
  }
  std::vector<std::string> roles;
  const std::string_view roles_text{reinterpret_cast<const char*>(roles_p),
                                    static_cast<std::size_t>(sqlite3_value_bytes(argv[0]))};
  const std::string_view role{reinterpret_cast<const char*>(role_p),
                              static_cast<std::size_t>(sqlite3_value_bytes(argv[1]))};
  if (!read_strings(roles_text, roles)) {
    sqlite3_result_error(ctx, "sreh_may_decide: approvals.roles is not a JSON array", -1);
    return;
  }
  sqlite3_result_int(ctx, role_rank(role) >= needed_rank(roles) ? 1 : 0);
}

} // namespace

int register_approval_functions(sqlite3* db) {
  return sqlite3_create_function_v2(db, "sreh_may_decide", 2,
                                    SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, nullptr,
                                    may_decide, nullptr, nullptr, nullptr);
}

// -- read methods --------------------------------------------------------------------------------

expected<std::optional<approval>> sqlite_store::get_approval(std::string_view id) {
  auto c = readers_.borrow();
  return first_row(collect<approval>(
    *c, sql_get_approval, "get approval", [&](stmt_use& q) { q.bind(1, id); }, read_approval));
}

expected<approval_page> sqlite_store::list_approvals(const approval_filter& f) {
  const page_window window{f.limit};
  const char* sql = !f.run_id.empty() ? sql_list_approvals_run
                    : f.state         ? sql_list_approvals_state
                                      : sql_list_approvals;
  auto c = readers_.borrow();
  auto rows = collect<approval>(
    *c, sql, "list approvals",
    [&](stmt_use& q) {
      q.bind(1, window.fetch());
      auto text_or_null = [&q](int i, std::string_view v) {
        if (v.empty())
          q.bind_null(i);
        else
          q.bind(i, v);
      };
      text_or_null(2, f.before_id);
      text_or_null(3, f.state ? std::string_view{to_string(*f.state)} : std::string_view{});
      if (sql == sql_list_approvals_run)
        q.bind(4, f.run_id);
      text_or_null(5, f.role);
    },
    read_approval);
  return make_page(window, std::move(rows), &approval_page::approvals);
}

expected<std::vector<approval>> sqlite_store::pending_approvals() {
  auto c = readers_.borrow();
  return collect<approval>(
    *c, sql_pending_approvals, "pending approvals", [](stmt_use&) {}, read_approval);
}

expected<std::optional<approval>> sqlite_store::approval_for_step(std::string_view run_id,
                                                                  std::int64_t n) {
  auto c = readers_.borrow();
  return first_row(collect<approval>(
    *c, sql_approval_for_step, "approval for step",
    [&](stmt_use& q) { q.bind(1, run_id).bind(2, n); }, read_approval));
}

expected<std::vector<step>> sqlite_store::rate_counted_tool_steps(timestamp_us since) {
  auto c = readers_.borrow();
  return collect<step>(
    *c, sql_rate_counted_tool_steps, "rate counted tool steps",
    [&](stmt_use& q) { q.bind(1, since); }, read_step);
}

} // namespace sreh::persistence::sqlite
