#!/usr/bin/env bash
# A throwaway NATS server with JetStream for tests and benchmarks.
#
#   scripts/nats.sh start DIR PORT MONITOR_PORT  start nats-server -js on 127.0.0.1:PORT (store in
#                                                DIR/store, log in DIR/server.log, monitoring on
#                                                MONITOR_PORT), wait until /healthz answers, print
#                                                nats://127.0.0.1:PORT
#   scripts/nats.sh stop DIR                     stop it (SIGTERM, SIGKILL after 10 s), remove DIR
#
# Both are idempotent: start with a running server in DIR prints its URL; stop without one
# only removes DIR. DIR must be under /tmp.
set -euo pipefail

script=nats.sh
# shellcheck source=lib/throwaway.sh
. "$(dirname "$0")/lib/throwaway.sh"

usage() { die "usage: $0 start DIR PORT MONITOR_PORT | stop DIR"; }

start() {
  local dir="$1" port="$2" mport="$3"
  check_dir "$dir"
  check_port "$port"
  check_port "$mport"
  command -v nats-server >/dev/null || [ -x /usr/sbin/nats-server ] \
    || die "nats-server not found (apt-get install nats-server)"
  local bin
  bin="$(command -v nats-server || echo /usr/sbin/nats-server)"
  local url="nats://127.0.0.1:$port"
  mkdir -p "$dir"
  if running_pid "$dir/nats.pid" >/dev/null; then
    echo "$url" # already running: idempotent
    return 0
  fi
  "$bin" -js -a 127.0.0.1 -p "$port" -sd "$dir/store" -m "$mport" -l "$dir/server.log" \
    </dev/null >/dev/null 2>&1 &
  echo $! >"$dir/nats.pid"
  echo "$port $mport" >"$dir/ports"
  if wait_http "http://127.0.0.1:$mport/healthz" "$dir/nats.pid" 200; then # 10 s
    echo "$url"
    return 0
  fi
  tail -n 20 "$dir/server.log" >&2 2>/dev/null || true
  stop "$dir" >/dev/null 2>&1 || true
  die "cannot start nats-server in $dir on port $port"
}

stop() { stop_and_remove "$1" "$1/nats.pid"; }

case "${1:-}" in
  start) [ $# -eq 4 ] || usage; start "$2" "$3" "$4" ;;
  stop) [ $# -eq 2 ] || usage; stop "$2" ;;
  *) usage ;;
esac
