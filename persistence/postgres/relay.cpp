// Relay offsets in the PostgreSQL store: one row per relay (relay_offsets, migration 3). Both
// methods run one autocommit statement on a pooled connection, so a relay never waits behind a
// group commit (and never takes the commit lock).
#include <pqxx/pqxx>

#include "core/base/clock.hpp"
#include "persistence/postgres/store_impl.hpp"

namespace sreh::persistence::pg {

expected<std::int64_t> postgres_store::relay_offset(std::string_view name) {
  auto c = readers_.borrow();
  return c->use_retrying(
    "read relay offset", [&](pqxx::connection& conn) -> expected<std::int64_t> {
      pqxx::nontransaction tx{conn};
      const auto rows =
        tx.exec_params("SELECT seq FROM relay_offsets WHERE name = $1", std::string{name});
      return rows.empty() ? std::int64_t{0} : rows[0][0].as<std::int64_t>();
    });
}

sreh::error postgres_store::set_relay_offset(std::string_view name, std::int64_t seq) {
  auto c = readers_.borrow();
  auto done = c->use_retrying("store relay offset", [&](pqxx::connection& conn) -> expected<bool> {
    pqxx::nontransaction tx{conn};
    tx.exec_params0("INSERT INTO relay_offsets (name, seq, updated_at) VALUES ($1, $2, $3) "
                    "ON CONFLICT (name) DO UPDATE SET seq = excluded.seq, "
                    "updated_at = excluded.updated_at",
                    std::string{name}, seq, sreh::system_clock{}.now_us());
    return true;
  });
  return done ? sreh::error{} : done.error();
}

} // namespace sreh::persistence::pg
