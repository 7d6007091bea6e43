#!/usr/bin/env bash
# A throwaway NATS server with JetStream for tests and benchmarks.
#
#   scripts/nats.sh start DIR PORT MONITOR_PORT  start nats-server -js on 127.0.0.1:PORT (store in
#                                                DIR/store, log in DIR/server.log, monitoring on
#                                                MONITOR_PORT), wait until /healthz answers, print
#                                                nats://127.0.0.1:PORT
#   scripts/nats.sh start DIR PORT MONITOR_PORT --tls CADIR [--verify]
#                                                the same with TLS on the client port: the
#                                                server's certificate is CADIR/nats.pem (made
#                                                with scripts/dev-ca.sh CADIR nats when missing,
#                                                valid for localhost and 127.0.0.1); --verify
#                                                also requires a client certificate signed by
#                                                CADIR/ca.pem. Prints tls://localhost:PORT
#   scripts/nats.sh stop DIR                     stop it (SIGTERM, SIGKILL after 10 s), remove DIR
#
# Both are idempotent: start with a running server in DIR prints its URL; stop without one
# only removes DIR. DIR must be under /tmp.
set -euo pipefail

script=nats.sh
# shellcheck source=lib/throwaway.sh
. "$(dirname "$0")/lib/throwaway.sh"

usage() { die "usage: $0 start DIR PORT MONITOR_PORT [--tls CADIR [--verify]] | stop DIR"; }

start() {
  local dir="$1" port="$2" mport="$3" cadir="${4:-}" verify="${5:-}"
  check_dir "$dir"
  check_port "$port"
  check_port "$mport"
  command -v nats-server >/dev/null || [ -x /usr/sbin/nats-server ] \
    || die "nats-server not found (apt-get install nats-server)"
  local bin
  bin="$(command -v nats-server || echo /usr/sbin/nats-server)"
  local url="nats://127.0.0.1:$port"
  local tls=()
  if [ -n "$cadir" ]; then
    [ -f "$cadir/nats.pem" ] || "$(dirname "$0")/dev-ca.sh" "$cadir" nats >/dev/null
    cadir="$(cd "$cadir" && pwd)"
    tls=(--tls --tlscert "$cadir/nats.pem" --tlskey "$cadir/nats.key" --tlscacert "$cadir/ca.pem")
    [ -z "$verify" ] || tls+=(--tlsverify)
    url="tls://localhost:$port" # the certificate's name: clients check it
  fi
  mkdir -p "$dir"
  if running_pid "$dir/nats.pid" >/dev/null; then
    echo "$url" # already running: idempotent
    return 0
  fi
  "$bin" -js -a 127.0.0.1 -p "$port" -sd "$dir/store" -m "$mport" -l "$dir/server.log" \
    ${tls[@]+"${tls[@]}"} </dev/null >/dev/null 2>&1 &
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
  start)
    if [ $# -eq 6 ] && [ "$5" = "--tls" ]; then
      start "$2" "$3" "$4" "$6"
    elif [ $# -eq 7 ] && [ "$5" = "--tls" ] && [ "$7" = "--verify" ]; then
      start "$2" "$3" "$4" "$6" verify
    else
      [ $# -eq 4 ] || usage
      start "$2" "$3" "$4"
    fi
    ;;
  stop) [ $# -eq 2 ] || usage; stop "$2" ;;
  *) usage ;;
esac
