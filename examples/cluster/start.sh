#!/usr/bin/env bash
# A three-node sreh cluster on this machine, for trying it out: a throwaway PostgreSQL 15 and a
# NATS JetStream server on loopback (scripts/pg.sh, scripts/nats.sh), and node-a, node-b, node-c
# from examples/cluster/node.yaml + topology.yaml. One admin token and one approver token work
# on every node (data/cluster/*.token). Ctrl-C stops the nodes, NATS and PostgreSQL.
#
#   examples/cluster/start.sh            (installs what is missing and builds first)
#
# Ports: nodes 7071-7073 (HTTP) and 7171-7173 (cluster), PostgreSQL $SREH_CLUSTER_PG_PORT (55433),
# NATS $SREH_CLUSTER_NATS_PORT (4223, monitoring 8223).
set -euo pipefail
cd "$(dirname "$0")/../.."
scripts/setup.sh
scripts/build.sh release sreh
sreh=build/release/app/sreh
pg_dir=/tmp/sreh-cluster-pg
nats_dir=/tmp/sreh-cluster-nats
pids=()

cleanup() {
  trap - EXIT INT TERM
  echo "stopping the cluster..." >&2
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  scripts/nats.sh stop "$nats_dir" || true
  scripts/pg.sh stop "$pg_dir" || true
}
trap cleanup EXIT INT TERM

SREH_PG_URL=$(scripts/pg.sh start "$pg_dir" "${SREH_CLUSTER_PG_PORT:-55433}")
SREH_NATS_URL=$(scripts/nats.sh start "$nats_dir" "${SREH_CLUSTER_NATS_PORT:-4223}" 8223)
export SREH_PG_URL SREH_NATS_URL

# The cluster's tokens: only their SHA-256 goes into the config (through the environment).
mkdir -p data/cluster
umask 077
for role in admin approver; do
  f=data/cluster/$role.token
  [ -s "$f" ] || head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$f"
done
SREH_ADMIN_SHA256=$(sha256sum <data/cluster/admin.token | cut -d' ' -f1)
SREH_APPROVER_SHA256=$(sha256sum <data/cluster/approver.token | cut -d' ' -f1)
export SREH_ADMIN_SHA256 SREH_APPROVER_SHA256

for n in node-a node-b node-c; do
  "$sreh" serve --config examples/cluster/node.yaml --node-id "$n" >"data/cluster/$n.log" 2>&1 &
  pids+=($!)
done
for port in 7071 7072 7073; do
  for _ in $(seq 1 300); do
    curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && break
    sleep 0.1 # waiting for the node to come up (bounded: 30 s)
  done
  curl -sf "http://127.0.0.1:$port/readyz" >/dev/null \
    || { echo "node on port $port did not come up; see data/cluster/*.log" >&2; exit 1; }
done
"$sreh" cluster check examples/cluster/topology.yaml || true

cat >&2 <<MSG

  a 3-node sreh cluster is up: http://127.0.0.1:7071  :7072  :7073   (logs: data/cluster/*.log)
  PostgreSQL: $SREH_PG_URL   NATS: $SREH_NATS_URL

  export SREH_TOKEN=\$(cat data/cluster/admin.token)
  curl -s -H "Authorization: Bearer \$SREH_TOKEN" http://127.0.0.1:7071/v1/cluster/nodes
  build/release/app/sreh submit --server 127.0.0.1:7072 "checkout is failing - find out why and fix it" --watch
  curl -N -H "Authorization: Bearer \$SREH_TOKEN" http://127.0.0.1:7073/v1/events    (every node's events)
  kill -9 one node (see 'jobs -l' or pgrep -af "node-id node-b"): its runs move to the others.

  Ctrl-C stops everything.
MSG
wait
