// The array literals the PostgreSQL store sends its rows as: each text element quoted, with '"'
// and '\' escaped, and nothing else touched.
#define CAF_SUITE persistence_pg_columns
#include <string>

#include "persistence/postgres/rows.hpp"
#include "tests/support/caf_test.hpp"

using sreh::persistence::pg::array_columns;

CAF_TEST(text elements are quoted with quotes and backslashes escaped) {
  array_columns cols{2};
  cols.row().text(R"({"a":"b\"c"})").integer(7);
  cols.row().text("").integer(-1);
  cols.row().text("back\\slash, {braces} and ünïcode\n").integer(0);
  const auto& out = cols.finish();
  CAF_REQUIRE_EQUAL(out.size(), 2u);
  CAF_CHECK_EQUAL(out[0], R"({"{\"a\":\"b\\\"c\"}","","back\\slash, {braces} and ünïcode)"
                          "\n\"}");
  CAF_CHECK_EQUAL(out[1], "{7,-1,0}");
  CAF_CHECK_EQUAL(cols.rows(), 3u);
}

CAF_TEST(a long text is escaped wherever its quotes and backslashes fall) {
  std::string v, want = "{\"";
  for (int i = 0; i < 60; ++i) { // runs of 0..22 plain bytes: every offset in a block of 16
    v += std::string(static_cast<std::size_t>(i % 23), 'p') + (i % 2 ? "\"" : "\\");
    want += std::string(static_cast<std::size_t>(i % 23), 'p') + (i % 2 ? "\\\"" : "\\\\");
  }
  array_columns cols{1};
  cols.row().text(v);
  CAF_CHECK_EQUAL(cols.finish()[0], want + "\"}");
}
