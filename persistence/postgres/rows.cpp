#include "persistence/postgres/rows.hpp"

#include <fmt/format.h>
#include <pqxx/field>

#include <cstring>

#include "core/base/byte_scan.hpp"
#include "persistence/store/approval_codec.hpp"
#include "persistence/store/row_columns.hpp"

namespace sreh::persistence::pg {

std::string text(const pqxx::field& f) {
  return {f.c_str(), f.size()};
}

namespace {

constexpr std::string_view dialect = "postgres";

/// The columns of a selected row, read left to right (row_columns.hpp's source).
class row_source {
 public:
  explicit row_source(const pqxx::row& row) : row_(row) {}
  std::string text() { return pg::text(row_[col_++]); }
  std::int64_t integer() { return row_[col_++].as<std::int64_t>(); }
  double number() { return row_[col_++].as<double>(); }
  bool boolean() { return row_[col_++].as<bool>(); }

 private:
  const pqxx::row& row_;
  int col_ = 0;
};

} // namespace

// -- array columns -------------------------------------------------------------------------------

std::string& array_columns::next() {
  auto& c = cols_[col_++];
  if (rows_ > 1)
    c += ',';
  return c;
}

array_columns& array_columns::text(std::string_view v) {
  auto& c = next();
  // Sized for the worst case (every byte escaped), then cut to what was written: the plain runs
  // between the quotes and backslashes (JSON has a quote every few bytes) go in at once.
  const auto at = c.size();
  c.resize(at + 2 * v.size() + 2);
  char* out = c.data() + at;
  *out++ = '"';
  for (;;) {
    const auto plain = find_quote_or_backslash(v);
    std::memcpy(out, v.data(), plain);
    out += plain;
    if (plain == v.size())
      break;
    *out++ = '\\';
    *out++ = v[plain];
    v.remove_prefix(plain + 1);
  }
  *out++ = '"';
  c.resize(static_cast<std::size_t>(out - c.data()));
  return *this;
}

array_columns& array_columns::integer(std::int64_t v) {
  fmt::format_to(std::back_inserter(next()), "{}", v);
  return *this;
}

array_columns& array_columns::number(double v) {
  fmt::format_to(std::back_inserter(next()), "{}", v); // the shortest text that reads back as v
  return *this;
}

const std::vector<std::string>& array_columns::finish() {
  for (auto& c : cols_)
    c += '}';
  return cols_;
}

// -- writes --------------------------------------------------------------------------------------

void add_run(array_columns& c, const run& r) {
  rows::write_run(c.row(), r);
}

void add_step(array_columns& c, const step& s) {
  rows::write_step(c.row(), s);
}

void add_approval(array_columns& c, const approval& a) {
  rows::write_approval(c.row(), a);
  c.integer(needed_rank(a.roles));
}

void add_event(array_columns& c, const event& e, std::int64_t seq, std::string_view prev_hash,
               std::string_view hash) {
  rows::write_event(c.row(), e, seq);
  c.text(prev_hash).text(hash);
}

// -- reads ---------------------------------------------------------------------------------------

expected<run> read_run(const pqxx::row& row) {
  row_source in{row};
  return rows::read_run(in, dialect);
}

expected<step> read_step(const pqxx::row& row) {
  row_source in{row};
  return rows::read_step(in, dialect);
}

event read_event(const pqxx::row& row) {
  row_source in{row};
  return rows::read_event(in);
}

expected<approval> read_approval(const pqxx::row& row) {
  row_source in{row};
  return rows::read_approval(in, dialect);
}

} // namespace sreh::persistence::pg
