// Cluster membership in the PostgreSQL store (migration 4): heartbeats that renew a member's
// lease, and the claiming of the runs of members whose lease expired (docs/cluster.md).
#include <pqxx/pqxx>

#include <algorithm>

#include "persistence/postgres/rows.hpp"
#include "persistence/postgres/sql.hpp"
#include "persistence/postgres/store_impl.hpp"
#include "persistence/postgres/work_sql.hpp"

namespace sreh::persistence::pg {

namespace {

std::vector<node_row> read_members(pqxx::transaction_base& tx) {
  std::vector<node_row> out;
  for (const auto& row : tx.exec_prepared(pg::members.name)) {
    node_row n;
    n.node.node_id = text(row[0]);
    n.node.http = text(row[1]);
    n.node.cluster = text(row[2]);
    n.node.roles = text(row[3]);
    n.node.active_runs = row[4].as<std::int64_t>();
    n.node.parked_runs = row[5].as<std::int64_t>();
    n.node.started_at = row[6].as<std::int64_t>();
    n.heartbeat_age_ms = row[7].as<std::int64_t>();
    n.alive = row[8].as<bool>();
    n.owned_runs = row[9].as<std::int64_t>();
    out.push_back(std::move(n));
  }
  return out;
}

} // namespace

expected<heartbeat_result> postgres_store::heartbeat(const node_heartbeat& hb,
                                                     std::chrono::milliseconds ttl) {
  std::lock_guard lk{cluster_mtx_};
  return cluster_conn_.use_retrying(
    "heartbeat", [&](pqxx::connection& conn) -> expected<heartbeat_result> {
      pqxx::work tx{conn, "heartbeat"};
      heartbeat_result out;
      // Waits here while a survivor is claiming this node's runs (it share-locks the row).
      if (const auto prev = tx.exec_prepared(node_lease_expired.name, hb.node_id); !prev.empty())
        out.lease_was_expired = prev[0][0].as<bool>();
      tx.exec_prepared0(upsert_node.name, hb.node_id, hb.http, hb.cluster, hb.roles, hb.active_runs,
                        hb.parked_runs, hb.started_at, static_cast<std::int64_t>(ttl.count()));
      out.nodes = read_members(tx);
      tx.commit();
      return out;
    });
}

expected<std::vector<run>> postgres_store::claim_orphans(std::string_view node_id, int limit) {
  std::lock_guard lk{cluster_mtx_};
  return cluster_conn_.use("claim runs", [&](pqxx::connection& conn) -> expected<std::vector<run>> {
    pqxx::work tx{conn, "claim"};
    std::vector<run> out;
    for (const auto& row : tx.exec_prepared(pg::claim_orphans.name, std::string{node_id}, limit)) {
      auto r = read_run(row);
      if (!r)
        return r.error();
      out.push_back(std::move(*r));
    }
    tx.commit();
    std::sort(out.begin(), out.end(), [](const run& a, const run& b) {
      return a.created_at != b.created_at ? a.created_at < b.created_at : a.id < b.id;
    });
    return out;
  });
}

expected<std::vector<std::string>> postgres_store::claim_orphan_works(std::string_view node_id,
                                                                      int limit) {
  std::lock_guard lk{cluster_mtx_};
  return cluster_conn_.use(
    "claim works", [&](pqxx::connection& conn) -> expected<std::vector<std::string>> {
      pqxx::work tx{conn, "claim works"};
      std::vector<std::pair<std::int64_t, std::string>> rows;
      for (const auto& row :
           tx.exec_prepared(pg::claim_orphan_works.name, std::string{node_id}, limit))
        rows.emplace_back(row[1].as<std::int64_t>(), row[0].as<std::string>());
      tx.commit();
      std::sort(rows.begin(), rows.end());
      std::vector<std::string> out;
      for (auto& [at, id] : rows)
        out.push_back(std::move(id));
      return out;
    });
}

expected<std::vector<node_row>> postgres_store::members() {
  std::lock_guard lk{cluster_mtx_};
  return cluster_conn_.use_retrying("read members",
                                    [&](pqxx::connection& conn) -> expected<std::vector<node_row>> {
                                      pqxx::nontransaction tx{conn};
                                      return read_members(tx);
                                    });
}

} // namespace sreh::persistence::pg
