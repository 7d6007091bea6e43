#pragma once
// The mapping between rows of the PostgreSQL store and the domain types: whole columns as array
// parameters for the writes, pqxx rows for the reads.

#include <pqxx/row>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/expected.hpp"
#include "core/model/approval.hpp"
#include "core/model/event.hpp"
#include "core/model/run.hpp"
#include "core/model/step.hpp"
#include "persistence/store/row_columns.hpp"

namespace sreh::persistence::pg {

/// Rows laid out as columns, each the text of a PostgreSQL array literal ({"a","b"}, {1,2}),
/// for statements that `unnest` their array parameters. Call `row()`, then one add per column
/// in the statement's order.
class array_columns {
 public:
  explicit array_columns(std::size_t columns) : cols_(columns, std::string{"{"}) {}

  array_columns& row() {
    col_ = 0;
    ++rows_;
    return *this;
  }
  array_columns& text(std::string_view v);
  array_columns& owned(const std::string& v) { return text(v); }
  array_columns& integer(std::int64_t v);
  array_columns& number(double v);
  array_columns& boolean(bool v) { return raw(v ? "t" : "f"); }

  [[nodiscard]] std::size_t rows() const { return rows_; }
  /// The finished literals, one per column (call once, after the last row).
  [[nodiscard]] const std::vector<std::string>& finish();

 private:
  std::string& next();
  array_columns& raw(std::string_view v) {
    next() += v;
    return *this;
  }
  std::vector<std::string> cols_;
  std::size_t col_ = 0;
  std::size_t rows_ = 0;
};

// The columns are row_columns.hpp's, in its order.

/// Adds `r` in the order of the run columns.
void add_run(array_columns& cols, const run& r);
inline constexpr std::size_t run_column_count = rows::run_column_count;
/// Adds `s` in the order of the step columns.
void add_step(array_columns& cols, const step& s);
inline constexpr std::size_t step_column_count = rows::step_column_count;
/// Adds `a` in the order of the approval columns, then its needed rank.
void add_approval(array_columns& cols, const approval& a);
inline constexpr std::size_t approval_column_count = rows::approval_column_count + 1;
/// Adds `e` at `seq` with its audit hashes.
void add_event(array_columns& cols, const event& e, std::int64_t seq, std::string_view prev_hash,
               std::string_view hash);
inline constexpr std::size_t event_column_count = rows::event_column_count;

/// A text field byte for byte (embedded NULs included), "" for NULL.
[[nodiscard]] std::string text(const pqxx::field& f);

/// Readers of rows selected with the columns of pg_sql.hpp; an unknown enum name or bad JSON is
/// an `internal` error naming the row.
[[nodiscard]] expected<run> read_run(const pqxx::row& r);
[[nodiscard]] expected<step> read_step(const pqxx::row& r);
[[nodiscard]] event read_event(const pqxx::row& r);
[[nodiscard]] expected<approval> read_approval(const pqxx::row& r);

} // namespace sreh::persistence::pg
