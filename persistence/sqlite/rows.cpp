#include "persistence/sqlite/rows.hpp"

#include "persistence/store/row_columns.hpp"

namespace sreh::persistence::sqlite {

namespace {

constexpr std::string_view dialect = "sqlite";

/// Binds the columns as ?1, ?2, ... (row_columns.hpp's sink).
class param_sink {
 public:
  explicit param_sink(stmt_use& q) : q_(q) {}
  param_sink& text(std::string_view v) { return next(v); }
  param_sink& owned(const std::string& v) {
    q_.bind_copy(i_++, v);
    return *this;
  }
  param_sink& integer(std::int64_t v) { return next(v); }
  param_sink& number(double v) { return next(v); }
  param_sink& boolean(bool v) { return next(v); }

 private:
  template <class T>
  param_sink& next(T v) {
    q_.bind(i_++, v);
    return *this;
  }
  stmt_use& q_;
  int i_ = 1;
};

/// The columns of a selected row, read left to right (row_columns.hpp's source).
class column_source {
 public:
  explicit column_source(const stmt_use& q) : q_(q) {}
  std::string text() { return q_.text(col_++); }
  std::int64_t integer() { return q_.i64(col_++); }
  double number() { return q_.f64(col_++); }
  bool boolean() { return q_.i64(col_++) != 0; }

 private:
  const stmt_use& q_;
  int col_ = 0;
};

} // namespace

void bind_run(stmt_use& q, const run& r) {
  param_sink out{q};
  rows::write_run(out, r);
}

expected<run> read_run(const stmt_use& q) {
  column_source in{q};
  return rows::read_run(in, dialect);
}

void bind_step(stmt_use& q, const step& s) {
  param_sink out{q};
  rows::write_step(out, s);
}

expected<step> read_step(const stmt_use& q) {
  column_source in{q};
  return rows::read_step(in, dialect);
}

void bind_event(stmt_use& q, const event& e, std::int64_t seq) {
  param_sink out{q};
  rows::write_event(out, e, seq);
}

event read_event(const stmt_use& q) {
  column_source in{q};
  return rows::read_event(in);
}

void bind_approval(stmt_use& q, const approval& a) {
  param_sink out{q};
  rows::write_approval(out, a);
}

expected<approval> read_approval(const stmt_use& q) {
  column_source in{q};
  return rows::read_approval(in, dialect);
}

} // namespace sreh::persistence::sqlite
