#include "persistence/postgres/sql.hpp"

#include <fmt/format.h>

#include <cctype>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "persistence/postgres/candidate_sql.hpp"
#include "persistence/postgres/delivery_sql.hpp"
#include "persistence/postgres/memory_sql.hpp"
#include "persistence/postgres/message_sql.hpp"
#include "persistence/postgres/work_sql.hpp"

namespace sreh::persistence::pg {

namespace {

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

/// `sql` with every parameter `$N` renumbered `$(N + by)`.
std::string shift_params(std::string_view sql, int by) {
  std::string out;
  out.reserve(sql.size() + 16);
  for (std::size_t i = 0; i < sql.size();) {
    if (sql[i] != '$' || i + 1 >= sql.size() || !is_digit(sql[i + 1])) {
      out += sql[i++];
      continue;
    }
    int n = 0;
    for (++i; i < sql.size() && is_digit(sql[i]); ++i)
      n = n * 10 + (sql[i] - '0');
    out += fmt::format("${}", n + by);
  }
  return out;
}

/// The types of `$1..$n` in `s`, read from their casts (`$3::bigint[]`), in order.
std::vector<std::string> param_types(const statement& s) {
  const std::string_view sql{s.sql};
  std::map<int, std::string> types;
  for (std::size_t i = 0; i + 1 < sql.size(); ++i) {
    if (sql[i] != '$' || !is_digit(sql[i + 1]))
      continue;
    int n = 0;
    std::size_t j = i + 1;
    for (; j < sql.size() && is_digit(sql[j]); ++j)
      n = n * 10 + (sql[j] - '0');
    if (sql.substr(j, 2) != "::")
      throw std::logic_error{fmt::format("statement {}: ${} has no cast", s.name, n)};
    std::size_t k = j + 2;
    while (k < sql.size() && (std::isalnum(static_cast<unsigned char>(sql[k])) != 0 ||
                              sql[k] == '_' || sql[k] == '[' || sql[k] == ']'))
      ++k;
    types.emplace(n, std::string{sql.substr(j + 2, k - j - 2)});
  }
  std::vector<std::string> out;
  for (const auto& [n, type] : types) {
    if (n != static_cast<int>(out.size()) + 1)
      throw std::logic_error{fmt::format("statement {}: no ${}", s.name, out.size() + 1)};
    out.push_back(type);
  }
  return out;
}

/// "SELECT f(...)" as the PL/pgSQL statement that runs it for its effect.
std::string perform(const statement& s) {
  const std::string_view sql{s.sql};
  return fmt::format("PERFORM {}", sql.substr(sql.find(' ') + 1));
}

std::uint64_t fnv1a(std::string_view text) {
  std::uint64_t h = 14695981039346656037ull;
  for (const char c : text) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return h;
}

commit_function build_commit_function() {
  std::vector<std::string> types{"bigint", "text"};
  std::string writes;
  // Each write runs only when it has rows; `first` is the parameter of its first column.
  auto add = [&](const statement& s, const char* text) {
    const int first = static_cast<int>(types.size()) + 1;
    for (auto& t : param_types(s))
      types.push_back(std::move(t));
    writes += fmt::format(
      fmt::runtime(text), fmt::arg("first", first), fmt::arg("sql", shift_params(s.sql, first - 1)),
      fmt::arg("notify", perform(notify_commit)), fmt::arg("sqlstate", commit_fenced_sqlstate));
  };
  add(insert_runs, "  IF cardinality(${first}) > 0 THEN\n    {sql};\n  END IF;\n");
  add(update_runs,
      "  IF cardinality(${first}) > 0 THEN\n"
      "    WITH u AS ({sql}) SELECT count(*) INTO updated FROM u;\n"
      "    IF updated <> cardinality(${first}) THEN\n"
      "      RAISE EXCEPTION USING ERRCODE = '{sqlstate}', MESSAGE = format("
      "'%s of %s run updates matched the writer''s runs', updated, cardinality(${first}));\n"
      "    END IF;\n  END IF;\n");
  add(upsert_steps, "  IF cardinality(${first}) > 0 THEN\n    {sql};\n  END IF;\n");
  add(upsert_approvals, "  IF cardinality(${first}) > 0 THEN\n    {sql};\n  END IF;\n");
  add(insert_events, "  IF cardinality(${first}) > 0 THEN\n    {sql};\n    {notify};\n  END IF;\n");

  const std::string_view head{log_head.sql}; // SELECT seq, hash FROM events ...
  const auto from = head.find(" FROM ");
  const std::string body = fmt::format(
    "#variable_conflict use_column\n"
    "DECLARE\n  log_seq bigint;\n  log_hash text;\n  updated bigint;\n"
    "BEGIN\n"
    "  {lock};\n"
    "  {head_select} INTO log_seq, log_hash{head_rest};\n"
    "  IF NOT FOUND THEN\n    log_seq := 0;\n  END IF;\n"
    "  IF log_seq <> $1 OR (log_seq > 0 AND log_hash IS DISTINCT FROM $2) THEN\n"
    "    RETURN QUERY SELECT false, log_seq, log_hash;\n    RETURN;\n  END IF;\n"
    "{writes}"
    "  RETURN QUERY SELECT true, log_seq, log_hash;\n"
    "END\n",
    fmt::arg("lock", perform(lock_commit)), fmt::arg("head_select", head.substr(0, from)),
    fmt::arg("head_rest", head.substr(from)), fmt::arg("writes", writes));

  std::string signature;
  std::string args;
  for (std::size_t i = 0; i < types.size(); ++i) {
    signature += fmt::format("{}{}", i == 0 ? "" : ", ", types[i]);
    args += fmt::format("{}${}::{}", i == 0 ? "" : ", ", i + 1, types[i]);
  }
  commit_function f;
  f.name = fmt::format("sreh_commit_{:016x}", fnv1a(signature + body));
  f.create_sql =
    fmt::format("CREATE OR REPLACE FUNCTION {}({}) RETURNS TABLE (ok boolean, head_seq bigint, "
                "head_hash text) LANGUAGE plpgsql AS $sreh_commit$\n{}$sreh_commit$",
                f.name, signature, body);
  f.call_sql = fmt::format("SELECT ok, head_seq, head_hash FROM {}({})", f.name, args);
  f.params = static_cast<int>(types.size());
  return f;
}

} // namespace

const commit_function& commit_at_once() {
  static const commit_function f = build_commit_function();
  return f;
}

void prepare_statements(pqxx::connection& c) {
  // The write statements are not among them: the commit function is made of their SQL.
  for (const auto& s : {lock_commit,
                        log_head,
                        runs_by_keys,
                        events_by_ids,
                        run_owners,
                        get_run,
                        list_runs,
                        list_runs_state,
                        unfinished_runs,
                        run_by_key,
                        get_steps,
                        rate_counted_tool_steps,
                        read_events,
                        read_run_events,
                        get_approval,
                        list_approvals,
                        list_approvals_state,
                        list_approvals_run,
                        pending_approvals,
                        approval_for_step,
                        stats,
                        ping,
                        node_lease_expired,
                        upsert_node,
                        members,
                        claim_orphans})
    c.prepare(s.name, s.sql);
  for (const auto& s : work_statements)
    c.prepare(s.name, s.sql);
  for (const auto& s : memory_statements)
    c.prepare(s.name, s.sql);
  for (const auto& s : candidate_statements)
    c.prepare(s.name, s.sql);
  for (const auto& s : message_statements)
    c.prepare(s.name, s.sql);
  for (const auto& s : delivery_statements)
    c.prepare(s.name, s.sql);
  c.prepare(commit_at_once_statement, commit_at_once().call_sql);
}

} // namespace sreh::persistence::pg
