#!/usr/bin/env bash
# A three-node sreh cluster on this machine, for trying it out: a throwaway PostgreSQL 15 and a
# NATS JetStream server on loopback (scripts/pg.sh, scripts/nats.sh), and node-a, node-b, node-c
# from examples/cluster/node.yaml + topology.yaml. One admin token and one approver token work
# on every node (data/cluster/*.token). Ctrl-C (or SIGTERM) stops the nodes, NATS and PostgreSQL.
#
#   examples/cluster/start.sh            (installs what is missing and builds first)
#   examples/cluster/start.sh --tls      TLS everywhere (node-tls.yaml + topology-tls.yaml): a dev
#                                        CA in data/cluster/tls (scripts/dev-ca.sh), HTTPS on the
#                                        fronts, mutual TLS on the cluster links, PostgreSQL with
#                                        sslmode=verify-full, NATS over tls:// with a client
#                                        certificate (docs/security.md)
#
# Each node's pid is in data/cluster/<node>.pid, for trying failover with kill -9 (the nodes serve
# the failover-drill runbook of examples/cluster/flows; docs/cluster.md walks through it).
#
# Ports: nodes 7071-7073 (HTTP or HTTPS) and 7171-7173 (cluster), PostgreSQL
# $SREH_CLUSTER_PG_PORT (55433), NATS $SREH_CLUSTER_NATS_PORT (4223, monitoring 8223).
# SREH_BIN=path/to/sreh skips installing and building; SREH_CLUSTER_DIR (default data/cluster)
# holds the tokens, logs, pid files and certificates.
set -euo pipefail
tls=0
case "${1:-}" in
  --tls) tls=1 ;;
  "") ;;
  *) echo "usage: $0 [--tls]" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/../.."
if [ -z "${SREH_BIN:-}" ]; then
  scripts/setup.sh
  scripts/build.sh release sreh
fi
sreh=${SREH_BIN:-build/release/app/sreh}
state=${SREH_CLUSTER_DIR:-data/cluster}
suffix=""
if [ "$tls" = 1 ]; then suffix=-tls; fi
pg_dir=/tmp/sreh-cluster-pg$suffix
nats_dir=/tmp/sreh-cluster-nats$suffix
pids=()

cleanup() {
  trap - EXIT INT TERM
  echo "stopping the cluster..." >&2
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -f "$state"/node-?.pid
  scripts/nats.sh stop "$nats_dir" || true
  scripts/pg.sh stop "$pg_dir" || true
}
trap cleanup EXIT INT TERM

mkdir -p "$state"
config=examples/cluster/node.yaml
topology=examples/cluster/topology.yaml
scheme=http
pg_tls=()
nats_tls=()
curl_tls=()
if [ "$tls" = 1 ]; then
  # One dev CA: a certificate per member (front and cluster links), one for the fronts'
  # shared name (localhost), one for the relay's NATS client; pg.sh and nats.sh add theirs.
  SREH_TLS_DIR=$(cd "$state" && mkdir -p tls && cd tls && pwd)
  export SREH_TLS_DIR
  scripts/dev-ca.sh "$SREH_TLS_DIR" node-a node-b node-c server relay >/dev/null
  config=examples/cluster/node-tls.yaml
  topology=examples/cluster/topology-tls.yaml
  scheme=https
  pg_tls=(--tls "$SREH_TLS_DIR")
  nats_tls=(--tls "$SREH_TLS_DIR" --verify)
  curl_tls=(--cacert "$SREH_TLS_DIR/ca.pem")
  export SREH_CA_FILE="$SREH_TLS_DIR/ca.pem" # for `sreh cluster check` below
fi

SREH_PG_URL=$(scripts/pg.sh start "$pg_dir" "${SREH_CLUSTER_PG_PORT:-55433}" ${pg_tls[@]+"${pg_tls[@]}"})
SREH_NATS_URL=$(scripts/nats.sh start "$nats_dir" "${SREH_CLUSTER_NATS_PORT:-4223}" 8223 \
  ${nats_tls[@]+"${nats_tls[@]}"})
export SREH_PG_URL SREH_NATS_URL

# The cluster's tokens: only their SHA-256 goes into the config (through the environment).
(
  umask 077
  for role in admin approver; do
    f=$state/$role.token
    [ -s "$f" ] || head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$f"
  done
)
SREH_ADMIN_SHA256=$(sha256sum <"$state/admin.token" | cut -d' ' -f1)
SREH_APPROVER_SHA256=$(sha256sum <"$state/approver.token" | cut -d' ' -f1)
export SREH_ADMIN_SHA256 SREH_APPROVER_SHA256

for n in node-a node-b node-c; do
  "$sreh" serve --config "$config" --node-id "$n" >"$state/$n.log" 2>&1 &
  pids+=($!)
  echo $! >"$state/$n.pid" # for kill -9 in the failover walkthrough (docs/cluster.md)
done
for port in 7071 7072 7073; do
  url="$scheme://127.0.0.1:$port/readyz"
  for _ in $(seq 1 300); do
    curl -sf ${curl_tls[@]+"${curl_tls[@]}"} "$url" >/dev/null && break
    sleep 0.1 # waiting for the node to come up (bounded: 30 s)
  done
  curl -sf ${curl_tls[@]+"${curl_tls[@]}"} "$url" >/dev/null \
    || { echo "node on port $port did not come up; see $state/*.log" >&2; exit 1; }
done
"$sreh" cluster check "$topology" || true

if [ "$tls" = 1 ]; then
  cat >&2 <<MSG

  a 3-node sreh cluster is up over TLS: https://127.0.0.1:7071  :7072  :7073   (logs: $state/*.log)
  PostgreSQL: $SREH_PG_URL
  NATS: $SREH_NATS_URL (client certificate $SREH_TLS_DIR/relay.pem)

  export SREH_TOKEN=\$(cat $state/admin.token) SREH_CA_FILE=$SREH_TLS_DIR/ca.pem
  $sreh nodes --server https://127.0.0.1:7071
  $sreh submit --server https://127.0.0.1:7072 "checkout is failing - find out why and fix it" --watch
  curl -N --cacert \$SREH_CA_FILE -H "Authorization: Bearer \$SREH_TOKEN" https://127.0.0.1:7073/v1/events

  Ctrl-C stops everything.
MSG
else
  cat >&2 <<MSG

  a 3-node sreh cluster is up: http://127.0.0.1:7071  :7072  :7073   (logs: $state/*.log)
  PostgreSQL: $SREH_PG_URL   NATS: $SREH_NATS_URL

  export SREH_TOKEN=\$(cat $state/admin.token)
  curl -s -H "Authorization: Bearer \$SREH_TOKEN" http://127.0.0.1:7071/v1/cluster/nodes
  $sreh nodes --server 127.0.0.1:7071
  $sreh submit --server 127.0.0.1:7072 "checkout is failing - find out why and fix it" --watch
  curl -N -H "Authorization: Bearer \$SREH_TOKEN" http://127.0.0.1:7073/v1/events    (every node's events)

  failover: $sreh flow run failover-drill --server 127.0.0.1:7071   (45 s)
  then kill -9 \$(cat $state/NODE.pid) of the node that runs it ($sreh show RUN says which):
  a survivor claims the run after the lease and finishes it (docs/cluster.md, "Failover, step by step").

  Ctrl-C stops everything.
MSG
fi
wait
