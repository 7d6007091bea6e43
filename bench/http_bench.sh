#!/usr/bin/env bash
# HTTP front benchmark with wrk: req/s and latency for GET /healthz and GET /v1/runs/{id} on a
# node with the embedded default store. Prints the command lines it ran and one JSON line.
#
#   bench/http_bench.sh [SECONDS=10] [CONNECTIONS=64]   (SREH_BIN: another sreh binary)
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-10}"
conns="${2:-64}"
bin="${SREH_BIN:-build/release/app/sreh}"
command -v wrk >/dev/null || { echo "wrk is not installed (scripts/setup.sh installs it)" >&2; exit 1; }
[ -x "$bin" ] || { echo "build first: scripts/build.sh release" >&2; exit 1; }

dir=$(mktemp -d /tmp/sreh-httpbench-XXXXXX)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat > "$dir/sreh.yaml" <<CFG
listen: 127.0.0.1:$port
data_dir: $dir/data
logging: {level: warn}
model:
  provider: scripted
  script: [{tool: test.echo, args: {}}]
CFG
"$bin" serve --config "$dir/sreh.yaml" > "$dir/node.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$dir"' EXIT
for _ in $(seq 200); do curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && break; sleep 0.05; done
auth="Authorization: Bearer $(cat "$dir/data/admin.token")"  # generated at the node's first start
run=$(curl -sf -X POST -H "$auth" -H 'Content-Type: application/json' -d '{"goal":"bench"}' \
  "http://127.0.0.1:$port/v1/goals" | python3 -c 'import json,sys; print(json.load(sys.stdin)["run"]["id"])')

measure() {
  local path=$1
  echo "wrk -t2 -c$conns -d${secs}s --latency -H 'Authorization: Bearer …' http://127.0.0.1:$port$path" >&2
  wrk -t2 -c"$conns" -d"${secs}s" --latency -H "$auth" "http://127.0.0.1:$port$path" \
    | tee "$dir/wrk.txt" >&2
  grep -q "Non-2xx" "$dir/wrk.txt" && { echo "wrk saw error responses" >&2; exit 1; }
  local rps p50 p99
  rps=$(awk '/Requests\/sec/ {print $2}' "$dir/wrk.txt")
  p50=$(awk '$1=="50%" {print $2}' "$dir/wrk.txt")
  p99=$(awk '$1=="99%" {print $2}' "$dir/wrk.txt")
  echo "{\"path\":\"$path\",\"rps\":$rps,\"p50\":\"$p50\",\"p99\":\"$p99\"}"
}
a=$(measure /healthz)
b=$(measure "/v1/runs/$run")
echo "reproduce: bench/http_bench.sh $secs $conns"
echo "{\"bench\":\"http\",\"connections\":$conns,\"seconds\":$secs,\"routes\":[$a,$b]}"
