#include "pg_sql.hpp"

namespace sreh::persistence::pg {

void prepare_statements(pqxx::connection& c) {
  for (const auto& s :
       {lock_commit,  log_head,        runs_by_keys,         insert_runs,        update_runs,
        upsert_steps, upsert_approvals, insert_events,       get_run,            list_runs,
        list_runs_state, unfinished_runs, run_by_key,        get_steps,          executed_tool_steps,
        read_events,  read_run_events, get_approval,         list_approvals,     list_approvals_state,
        list_approvals_run, pending_approvals, approval_for_step, stats,         ping,
        run_owners,   events_by_ids,   notify_commit,   node_lease_expired,   upsert_node,        members,
        claim_orphans})
    c.prepare(s.name, s.sql);
}

} // namespace sreh::persistence::pg
