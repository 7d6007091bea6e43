// Connection strings of the PostgreSQL store: what logs may show, and the connect timeout added
// to every connection.
#define CAF_SUITE persistence_pg_url
#include "caf_test.hpp"

#include "pg_connection.hpp"

using sreh::persistence::pg::describe_url;
using sreh::persistence::pg::with_connect_timeout;

CAF_TEST(a connect timeout is added unless the string sets one) {
  CAF_CHECK_EQUAL(with_connect_timeout("postgresql://u@db:5432/sreh"),
                  "postgresql://u@db:5432/sreh?connect_timeout=5");
  CAF_CHECK_EQUAL(with_connect_timeout("postgres://db/sreh?sslmode=require"),
                  "postgres://db/sreh?sslmode=require&connect_timeout=5");
  CAF_CHECK_EQUAL(with_connect_timeout("host=db dbname=sreh"),
                  "host=db dbname=sreh connect_timeout=5");
  CAF_CHECK_EQUAL(with_connect_timeout("postgresql://db/sreh?connect_timeout=30"),
                  "postgresql://db/sreh?connect_timeout=30");
  CAF_CHECK_EQUAL(with_connect_timeout("host=db connect_timeout=1"), "host=db connect_timeout=1");
}

CAF_TEST(messages name the server and database but never the password) {
  CAF_CHECK_EQUAL(describe_url("postgresql://sreh:secret@db:5432/sreh?sslmode=require"),
                  "db:5432/sreh");
  CAF_CHECK_EQUAL(describe_url("host=db password=secret dbname=sreh"), "host=db dbname=sreh");
}
