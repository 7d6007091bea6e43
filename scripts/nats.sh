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

die() { echo "nats.sh: $*" >&2; exit 1; }
usage() { die "usage: $0 start DIR PORT MONITOR_PORT | stop DIR"; }

check_dir() {
  case "$1" in
    /tmp/?*) ;;
    *) die "DIR '$1' must be under /tmp" ;;
  esac
  case "$1" in *..*) die "DIR '$1' must not contain '..'" ;; esac
}

check_port() {
  [[ "$1" =~ ^[0-9]+$ ]] && [ "$1" -ge 1024 ] && [ "$1" -le 65535 ] \
    || die "port '$1' must be a number in 1024..65535"
}

# The pid in DIR/nats.pid when that process is alive.
running_pid() {
  local pidfile="$1/nats.pid" pid
  [ -f "$pidfile" ] || return 1
  pid="$(cat "$pidfile")"
  [[ "$pid" =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null && echo "$pid"
}

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
  if running_pid "$dir" >/dev/null; then
    echo "$url" # already running: idempotent
    return 0
  fi
  "$bin" -js -a 127.0.0.1 -p "$port" -sd "$dir/store" -m "$mport" -l "$dir/server.log" \
    </dev/null >/dev/null 2>&1 &
  echo $! >"$dir/nats.pid"
  echo "$port $mport" >"$dir/ports"
  local i
  for i in $(seq 1 200); do # 10 s
    if curl -sf "http://127.0.0.1:$mport/healthz" >/dev/null 2>&1; then
      echo "$url"
      return 0
    fi
    running_pid "$dir" >/dev/null || break
    sleep 0.05
  done
  tail -n 20 "$dir/server.log" >&2 2>/dev/null || true
  stop "$dir" >/dev/null 2>&1 || true
  die "cannot start nats-server in $dir on port $port"
}

stop() {
  local dir="$1" pid i
  check_dir "$dir"
  [ -d "$dir" ] || return 0 # already gone: idempotent
  if pid="$(running_pid "$dir")"; then
    kill -TERM "$pid" 2>/dev/null || true
    for i in $(seq 1 100); do # 10 s
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -rf "$dir"
}

case "${1:-}" in
  start) [ $# -eq 4 ] || usage; start "$2" "$3" "$4" ;;
  stop) [ $# -eq 2 ] || usage; stop "$2" ;;
  *) usage ;;
esac
