// Connection strings of the PostgreSQL store: what logs may show, and the network timeouts added
// to every connection.
#define CAF_SUITE persistence_pg_url
#include "persistence/postgres/connection.hpp"
#include "tests/support/caf_test.hpp"

using sreh::persistence::pg::describe_url;
using sreh::persistence::pg::with_network_timeouts;

CAF_TEST(network timeouts are added unless the string sets them) {
  const std::string all =
    "connect_timeout=5&tcp_user_timeout=15000&keepalives_idle=10&keepalives_interval=5&"
    "keepalives_count=3";
  CAF_CHECK_EQUAL(with_network_timeouts("postgresql://u@db:5432/sreh"),
                  "postgresql://u@db:5432/sreh?" + all);
  CAF_CHECK_EQUAL(with_network_timeouts("postgres://db/sreh?sslmode=require"),
                  "postgres://db/sreh?sslmode=require&" + all);
  CAF_CHECK_EQUAL(with_network_timeouts("host=db dbname=sreh"),
                  "host=db dbname=sreh connect_timeout=5 tcp_user_timeout=15000 keepalives_idle=10 "
                  "keepalives_interval=5 keepalives_count=3");
  CAF_CHECK_EQUAL(
    with_network_timeouts("postgresql://db/sreh?connect_timeout=30&keepalives_count=9"),
    "postgresql://db/sreh?connect_timeout=30&keepalives_count=9&tcp_user_timeout=15000&"
    "keepalives_idle=10&keepalives_interval=5");
  CAF_CHECK_EQUAL(
    with_network_timeouts("host=db connect_timeout=1 tcp_user_timeout=0 "
                          "keepalives_idle=1 keepalives_interval=1 keepalives_count=1"),
    "host=db connect_timeout=1 tcp_user_timeout=0 keepalives_idle=1 "
    "keepalives_interval=1 keepalives_count=1");
  // A key inside another value or key is not that key.
  CAF_CHECK_EQUAL(with_network_timeouts("host=db application_name=xconnect_timeout=1"),
                  "host=db application_name=xconnect_timeout=1 connect_timeout=5 "
                  "tcp_user_timeout=15000 keepalives_idle=10 keepalives_interval=5 "
                  "keepalives_count=3");
}

CAF_TEST(messages name the server and database but never the password) {
  CAF_CHECK_EQUAL(describe_url("postgresql://sreh:secret@db:5432/sreh?sslmode=require"),
                  "db:5432/sreh");
  CAF_CHECK_EQUAL(describe_url("host=db password=secret dbname=sreh"), "host=db dbname=sreh");
}
