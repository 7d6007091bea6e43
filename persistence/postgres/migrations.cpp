// The schema of the PostgreSQL store, in the versions that every store shares
// (store/schema_versions.hpp: 1 base, 2 approvals + audit chain, 3 relay offsets, 4 cluster
// membership, which only PostgreSQL has tables for, 5 the index of running tool intents, 6 Works
// and world state). Types are PostgreSQL's: bigint for integers, boolean for flags, jsonb for the
// approval lists, and COLLATE "C" on the ids so that cursors order and compare bytes as SQLite
// does, whatever the database's locale. JSON payloads (checkpoint, args, data, ...) stay text:
// they are hashed and returned byte for byte.
#include "persistence/postgres/migrations.hpp"

#include <fmt/format.h>
#include <pqxx/pqxx>

#include <array>
#include <string_view>

#include "core/base/clock.hpp"
#include "persistence/audit/audit.hpp"
#include "persistence/audit/audit_chain.hpp"
#include "persistence/postgres/rows.hpp"
#include "persistence/postgres/sql.hpp"
#include "persistence/store/schema_versions.hpp"

namespace sreh::persistence::pg {

namespace {

constexpr std::string_view schema_v1 = R"sql(
CREATE TABLE runs (
  id               text COLLATE "C" PRIMARY KEY,
  goal             text NOT NULL,
  state            text NOT NULL,
  waiting_for      text NOT NULL,
  submitter        text NOT NULL,
  idempotency_key  text COLLATE "C" NOT NULL DEFAULT '',
  node_id          text COLLATE "C" NOT NULL,
  created_at       bigint NOT NULL,
  updated_at       bigint NOT NULL,
  steps            bigint NOT NULL,
  tokens           bigint NOT NULL,
  max_steps        bigint NOT NULL,
  max_tokens       bigint NOT NULL,
  deadline_us      bigint NOT NULL,
  max_result_bytes bigint NOT NULL,
  checkpoint       text NOT NULL,
  conclusion       text NOT NULL,
  error            text NOT NULL,
  labels           text NOT NULL
);
CREATE UNIQUE INDEX runs_idempotency_key ON runs(idempotency_key) WHERE idempotency_key <> '';
CREATE INDEX runs_state ON runs(state, id);
CREATE INDEX runs_unfinished ON runs(node_id, created_at)
  WHERE state IN ('pending', 'running', 'waiting');

CREATE TABLE steps (
  run_id           text COLLATE "C" NOT NULL REFERENCES runs(id),
  n                bigint NOT NULL,
  kind             text NOT NULL,
  state            text NOT NULL,
  tool             text NOT NULL,
  args             text NOT NULL,
  idempotency_key  text NOT NULL,
  decision         text NOT NULL,
  result           text NOT NULL,
  error            text NOT NULL,
  result_truncated boolean NOT NULL,
  started_at       bigint NOT NULL,
  finished_at      bigint NOT NULL,
  attempts         bigint NOT NULL,
  PRIMARY KEY (run_id, n)
);

CREATE TABLE events (
  seq     bigint PRIMARY KEY,
  id      text COLLATE "C" NOT NULL UNIQUE,
  run_id  text COLLATE "C" NOT NULL,
  run_seq bigint NOT NULL,
  kind    text NOT NULL,
  at      bigint NOT NULL,
  data    text NOT NULL
);
CREATE INDEX events_run ON events(run_id, seq);
)sql";

// needed_rank: the rank a role needs to decide the approval (approval_codec.hpp), computed at
// write time from `roles` because PostgreSQL cannot call the C++ rule in a query.
constexpr std::string_view schema_v2 = R"sql(
ALTER TABLE events ADD COLUMN prev_hash text NOT NULL DEFAULT '',
                   ADD COLUMN hash text NOT NULL DEFAULT '';

CREATE TABLE approvals (
  id          text COLLATE "C" PRIMARY KEY,
  run_id      text COLLATE "C" NOT NULL,
  step_n      bigint NOT NULL,
  kind        text NOT NULL,
  state       text NOT NULL,
  tool        text NOT NULL,
  args        text NOT NULL,
  rule_id     text NOT NULL,
  reason      text NOT NULL,
  required    bigint NOT NULL,
  roles       jsonb NOT NULL,
  requester   text NOT NULL,
  votes       jsonb NOT NULL,
  created_at  bigint NOT NULL,
  expires_at  bigint NOT NULL,
  on_timeout  text NOT NULL,
  escalate_to jsonb NOT NULL,
  escalated   boolean NOT NULL,
  decided_at  bigint NOT NULL,
  needed_rank integer NOT NULL
);
CREATE INDEX approvals_state ON approvals(state, id);
CREATE INDEX approvals_run_step ON approvals(run_id, step_n);

CREATE INDEX steps_tool_finished ON steps(finished_at)
  WHERE kind = 'tool' AND state = 'succeeded';
)sql";

/// Migration 2: chains the entries written before the chain existed, in seq order, a page at a
/// time, inside the migration's transaction.
sreh::error hash_existing_events(pqxx::work& tx) {
  auto read = [&](std::int64_t after, int limit) -> expected<std::vector<event>> {
    const auto rows =
      tx.exec_params("SELECT seq, id, run_id, run_seq, kind, at, data FROM events WHERE seq > $1 "
                     "ORDER BY seq LIMIT $2",
                     after, limit);
    std::vector<event> page;
    page.reserve(rows.size());
    for (const auto& row : rows)
      page.push_back(read_event(row));
    return page;
  };
  auto write = [&](const std::vector<audit_link>& links) -> sreh::error {
    array_columns cols{3};
    for (const auto& l : links)
      cols.row().integer(l.seq).text(l.prev_hash).text(l.hash);
    const auto& p = cols.finish();
    tx.exec_params0("UPDATE events SET prev_hash = u.prev_hash, hash = u.hash FROM "
                    "unnest($1::bigint[], $2::text[], $3::text[]) AS u(seq, prev_hash, hash) "
                    "WHERE events.seq = u.seq",
                    p[0], p[1], p[2]);
    return {};
  };
  return chain_existing_events("postgres: hash existing events: SHA-256 failed", read, write);
}

struct migration {
  int version;
  std::string_view sql;
  sreh::error (*then)(pqxx::work&);
};

// Version 3: durable offsets of the event relays (pg_relay.cpp).
constexpr std::string_view schema_v3 = R"sql(
CREATE TABLE relay_offsets (
  name       text COLLATE "C" PRIMARY KEY,
  seq        bigint NOT NULL,
  updated_at bigint NOT NULL
);
)sql";

// Version 4: cluster membership; a member's lease on the runs it owns (pg_cluster.cpp). Times
// are the database's clock.
constexpr std::string_view schema_v4 = R"sql(
CREATE TABLE cluster_nodes (
  id           text COLLATE "C" PRIMARY KEY,
  http         text NOT NULL,
  cluster      text NOT NULL,
  roles        text NOT NULL,
  active_runs  bigint NOT NULL,
  parked_runs  bigint NOT NULL,
  started_at   bigint NOT NULL,
  heartbeat_at timestamptz NOT NULL,
  lease_until  timestamptz NOT NULL
);
)sql";

// Version 5: the tool intents still running, found by rate limits.
constexpr std::string_view schema_v5 = R"sql(
CREATE INDEX steps_tool_open ON steps(started_at)
  WHERE kind = 'tool' AND state = 'intent';
)sql";

// Version 6: Works (a Work is its document, `doc`; the other columns are what queries filter on,
// `labels` as compact JSON text, see store/work_codec.hpp), the template versions they are pinned
// to, and world state: each entity at its current version and every version in its history.
constexpr std::string_view schema_v6 = R"sql(
CREATE TABLE works (
  id               text COLLATE "C" PRIMARY KEY,
  state            text NOT NULL,
  kind             text NOT NULL,
  severity         text NOT NULL,
  template         text NOT NULL,
  template_version text NOT NULL,
  title            text NOT NULL,
  labels           text NOT NULL,
  idempotency_key  text COLLATE "C" NOT NULL DEFAULT '',
  node_id          text COLLATE "C" NOT NULL,
  created_at       bigint NOT NULL,
  updated_at       bigint NOT NULL,
  doc              text NOT NULL
);
CREATE UNIQUE INDEX works_idempotency_key ON works(idempotency_key) WHERE idempotency_key <> '';
CREATE INDEX works_state ON works(state, id);
CREATE INDEX works_open ON works(node_id, created_at)
  WHERE state NOT IN ('resolved', 'cancelled');

CREATE TABLE work_templates (
  name       text COLLATE "C" NOT NULL,
  version    text COLLATE "C" NOT NULL,
  kind       text NOT NULL,
  text       text NOT NULL,
  first_seen bigint NOT NULL,
  PRIMARY KEY (name, version)
);

CREATE TABLE world_entities (
  id          text COLLATE "C" PRIMARY KEY,
  kind        text NOT NULL,
  version     bigint NOT NULL,
  attrs       text NOT NULL,
  depends_on  text NOT NULL,
  source      text NOT NULL,
  changed_by  text NOT NULL,
  observed_at bigint NOT NULL,
  updated_at  bigint NOT NULL
);

CREATE TABLE world_history (
  id          text COLLATE "C" NOT NULL,
  kind        text NOT NULL,
  version     bigint NOT NULL,
  attrs       text NOT NULL,
  depends_on  text NOT NULL,
  source      text NOT NULL,
  changed_by  text NOT NULL,
  observed_at bigint NOT NULL,
  updated_at  bigint NOT NULL,
  PRIMARY KEY (id, version)
);
)sql";

// Flow runs (docs/flows.md): what drives a run, the flow run that started it, and a flow run's
// pinned definition.
constexpr std::string_view schema_v7 = R"sql(
ALTER TABLE runs ADD COLUMN kind text NOT NULL DEFAULT 'goal';
ALTER TABLE runs ADD COLUMN parent text NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN spec text NOT NULL DEFAULT '{}';
)sql";

// A run's cost budget (budget.max_cost: the price of its model calls; 0 = none).
constexpr std::string_view schema_v8 = R"sql(
ALTER TABLE runs ADD COLUMN max_cost double precision NOT NULL DEFAULT 0;
)sql";

// What a run achieved beside how it ended, and when a tool step began to execute (after its
// approval wait).
constexpr std::string_view schema_v9 = R"sql(
ALTER TABLE runs ADD COLUMN outcome text NOT NULL DEFAULT '';
ALTER TABLE steps ADD COLUMN executed_at bigint NOT NULL DEFAULT 0;
)sql";

// Long-term memory (docs/memory.md): each entry's current version with its generated tsvector
// (English stemmer; the text weighted A, its tags B) under a GIN index, its labels as jsonb under
// a GIN index (the label filter is `@>`), and every version it had.
constexpr std::string_view schema_v10 = R"sql(
CREATE TABLE memories (
  id            text PRIMARY KEY,
  kind          text NOT NULL,
  version       bigint NOT NULL,
  deleted       boolean NOT NULL,
  text          text NOT NULL,
  tags          text NOT NULL,
  labels        jsonb NOT NULL,
  entities      text NOT NULL,
  run_id        text NOT NULL,
  work_id       text NOT NULL,
  author        text NOT NULL,
  change        text NOT NULL,
  restored_from bigint NOT NULL,
  created_at    bigint NOT NULL,
  updated_at    bigint NOT NULL,
  tsv           tsvector GENERATED ALWAYS AS (
                  setweight(to_tsvector('english', text), 'A') ||
                  setweight(to_tsvector('english', tags), 'B')) STORED
);
CREATE INDEX memories_tsv ON memories USING GIN (tsv);
CREATE INDEX memories_labels ON memories USING GIN (labels jsonb_path_ops);
CREATE INDEX memories_newest ON memories (updated_at DESC) WHERE NOT deleted;

CREATE TABLE memory_versions (
  id            text NOT NULL,
  kind          text NOT NULL,
  version       bigint NOT NULL,
  deleted       boolean NOT NULL,
  text          text NOT NULL,
  labels        jsonb NOT NULL,
  entities      text NOT NULL,
  run_id        text NOT NULL,
  work_id       text NOT NULL,
  author        text NOT NULL,
  change        text NOT NULL,
  restored_from bigint NOT NULL,
  created_at    bigint NOT NULL,
  updated_at    bigint NOT NULL,
  PRIMARY KEY (id, version)
);
)sql";

// How well a finished goal run reasoned (core/quality): its score as JSON, "" until it ends.
constexpr std::string_view schema_v11 = R"sql(
ALTER TABLE runs ADD COLUMN quality text NOT NULL DEFAULT '';
)sql";

// The evolution gate's candidates (docs/evolve.md): each candidate's current state as its
// document (`doc`: evolve::to_json); the other columns are what queries filter and order on.
constexpr std::string_view schema_v12 = R"sql(
CREATE TABLE candidates (
  id         text COLLATE "C" PRIMARY KEY,
  kind       text NOT NULL,
  state      text NOT NULL,
  created_at bigint NOT NULL,
  doc        text NOT NULL
);
CREATE INDEX candidates_newest ON candidates(created_at, id);
)sql";

// Runs' conversations (docs/conversation.md): each message under (run_id, seq), and the step of
// the run that took it (0 until then).
constexpr std::string_view schema_v13 = R"sql(
CREATE TABLE messages (
  run_id          text COLLATE "C" NOT NULL REFERENCES runs(id),
  seq             bigint NOT NULL,
  id              text COLLATE "C" NOT NULL UNIQUE,
  author          text NOT NULL,
  kind            text NOT NULL,
  text            text NOT NULL,
  at              bigint NOT NULL,
  idempotency_key text NOT NULL DEFAULT '',
  taken_step      bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (run_id, seq)
);
CREATE UNIQUE INDEX messages_key ON messages(run_id, idempotency_key) WHERE idempotency_key <> '';
CREATE INDEX messages_untaken ON messages(run_id) WHERE taken_step = 0 AND kind = 'message';
)sql";

// Version 14: SQLite's index of unfinished runs without an IN list; PostgreSQL evaluates its
// IN list in place, so nothing changes here.
constexpr std::string_view schema_v14 = "-- the unfinished runs' index: SQLite only";

// The notifications' outbox (docs/notifications.md): one row per notice and receiver.
constexpr std::string_view schema_v15 = R"sql(
CREATE TABLE deliveries (
  id         text COLLATE "C" PRIMARY KEY,
  event_seq  bigint NOT NULL,
  event      text NOT NULL,
  receiver   text NOT NULL,
  subject    text NOT NULL,
  group_key  text NOT NULL,
  notice     text NOT NULL,
  state      text NOT NULL,
  attempts   bigint NOT NULL,
  created_at bigint NOT NULL,
  next_at    bigint NOT NULL,
  done_at    bigint NOT NULL,
  last_error text NOT NULL
);
CREATE INDEX deliveries_due ON deliveries(next_at) WHERE state = 'pending';
CREATE INDEX deliveries_state ON deliveries(state, id);
CREATE INDEX deliveries_group ON deliveries(receiver, group_key, created_at);
)sql";

constexpr std::array<migration, 15> all_migrations{{
  {1, schema_v1, nullptr},
  {2, schema_v2, hash_existing_events},
  {3, schema_v3, nullptr},
  {4, schema_v4, nullptr},
  {5, schema_v5, nullptr},
  {6, schema_v6, nullptr},
  {7, schema_v7, nullptr},
  {8, schema_v8, nullptr},
  {9, schema_v9, nullptr},
  {10, schema_v10, nullptr},
  {11, schema_v11, nullptr},
  {12, schema_v12, nullptr},
  {13, schema_v13, nullptr},
  {14, schema_v14, nullptr},
  {15, schema_v15, nullptr},
}};
static_assert(follows_schema_history(all_migrations), "one numbering: store/schema_versions.hpp");

constexpr const char* create_version_table =
  "CREATE TABLE IF NOT EXISTS schema_version ("
  "  version integer PRIMARY KEY, applied_at bigint NOT NULL)";

} // namespace

void create_commit_function(pqxx::work& tx) {
  const auto& fn = commit_at_once();
  // By the schema's name as stored (a cast to regnamespace would fold an unquoted "Prod").
  if (tx.exec_params("SELECT 1 FROM pg_proc WHERE proname = $1 AND pronamespace = "
                     "(SELECT oid FROM pg_namespace WHERE nspname = current_schema())",
                     fn.name)
        .empty())
    tx.exec0(fn.create_sql);
}

int last_schema_version() {
  return all_migrations.back().version;
}

sreh::error migrate(pqxx::connection& c, const std::string& schema) {
  if (!schema.empty()) {
    pqxx::nontransaction tx{c};
    tx.exec0("CREATE SCHEMA IF NOT EXISTS " + tx.quote_name(schema));
  }
  for (;;) {
    pqxx::work tx{c, "migrate"};
    if (tx.exec1("SELECT current_schema()")[0].is_null())
      return {errc::invalid_argument,
              "postgres: no schema to create the tables in: the search_path names none that "
              "exists (set store.schema or create the schema)"};
    tx.exec_prepared(lock_commit.name);
    tx.exec0(create_version_table);
    const int current =
      tx.exec1("SELECT coalesce(max(version), 0) FROM schema_version")[0].as<int>();
    const int known = last_schema_version();
    if (current > known)
      return {errc::internal,
              fmt::format("postgres: the schema has version {}, newer than this build knows ({}); "
                          "use a newer sreh or another schema",
                          current, known)};
    if (current == known) {
      create_commit_function(tx);
      tx.commit();
      return {};
    }
    const auto& m = all_migrations[static_cast<std::size_t>(current)]; // versions are 1..n
    tx.exec0(std::string{m.sql});
    if (m.then != nullptr)
      if (auto err = m.then(tx))
        return err;
    tx.exec_params0("INSERT INTO schema_version (version, applied_at) VALUES ($1, $2)", m.version,
                    sreh::system_clock{}.now_us());
    tx.commit();
  }
}

} // namespace sreh::persistence::pg
