#!/usr/bin/env bash
# A throwaway Prometheus (Debian's `prometheus`) for tests and demos.
#
#   scripts/prometheus.sh start [--token-file FILE] [--alertmanager HOST:PORT] DIR PORT [TARGET...]
#       start prometheus on 127.0.0.1:PORT (data in DIR/data, log in DIR/server.log), scraping
#       itself and each TARGET (host:port for /metrics, or host:port/path) every second, with
#       the rules of DIR/rules.yml when that file exists (an always-firing
#       `SrehTestAlwaysFiring` otherwise); wait until it is ready; print http://127.0.0.1:PORT.
#       --token-file: scrape with that bearer token (sreh's /metrics needs a viewer's);
#       --alertmanager: send the alerts to that Alertmanager.
#   scripts/prometheus.sh stop DIR
#       stop it (SIGTERM, SIGKILL after 10 s), remove DIR
#
# Both are idempotent: start with a running server in DIR prints its URL; stop without one only
# removes DIR. DIR must be under /tmp.
set -euo pipefail

script=prometheus.sh
# shellcheck source=lib/throwaway.sh
. "$(dirname "$0")/lib/throwaway.sh"

usage() {
  die "usage: $0 start [--token-file FILE] [--alertmanager HOST:PORT] DIR PORT" \
    "[HOST:PORT[/PATH]...] | stop DIR"
}

start() {
  local token_file="" alertmanager=""
  while [ $# -gt 0 ]; do
    case "$1" in
      --token-file) token_file="${2:?}"; shift 2 ;;
      --alertmanager) alertmanager="${2:?}"; shift 2 ;;
      *) break ;;
    esac
  done
  [ $# -ge 2 ] || usage
  local dir="$1" port="$2"
  shift 2
  [ -z "$token_file" ] || [ -r "$token_file" ] || die "cannot read the token file '$token_file'"
  [ -z "$alertmanager" ] || [[ "$alertmanager" =~ ^[A-Za-z0-9.-]+:[0-9]+$ ]] ||
    die "--alertmanager '$alertmanager' must be host:port"
  check_dir "$dir"
  check_port "$port"
  command -v prometheus >/dev/null || die "prometheus not found (scripts/setup.sh installs it)"
  local url="http://127.0.0.1:$port"
  mkdir -p "$dir"
  if running_pid "$dir/prometheus.pid" >/dev/null; then
    echo "$url"
    return 0
  fi
  if [ ! -f "$dir/rules.yml" ]; then
    cat >"$dir/rules.yml" <<'RULES'
groups:
  - name: sreh-test
    interval: 1s
    rules:
      - alert: SrehTestAlwaysFiring
        expr: vector(1)
        labels: {severity: none}
        annotations: {summary: "fires always: for the tests of the alerts tool"}
RULES
  fi
  local targets="'127.0.0.1:$port'" t jobs="" auth=""
  [ -z "$token_file" ] || auth="    authorization: {credentials_file: '$token_file'}"
  for t in "$@"; do
    [[ "$t" =~ ^([A-Za-z0-9.-]+:[0-9]+)(/[A-Za-z0-9._/-]*)?$ ]] ||
      die "scrape target '$t' must be host:port or host:port/path"
    local hostport="${BASH_REMATCH[1]}" path="${BASH_REMATCH[2]}"
    if [ -z "$path" ] || [ "$path" = /metrics ]; then
      targets="$targets, '$hostport'"
      continue
    fi
    # A job per path other than /metrics, named after it (/sandbox/metrics: sandbox-metrics).
    local job="${path#/}"
    jobs="$jobs
  - job_name: '${job//\//-}'
    metrics_path: '$path'
    static_configs: [{targets: ['$hostport']}]
$auth"
  done
  {
    echo "global: {scrape_interval: 1s, evaluation_interval: 1s}"
    echo "rule_files: ['$dir/rules.yml']"
    [ -z "$alertmanager" ] ||
      echo "alerting: {alertmanagers: [{static_configs: [{targets: ['$alertmanager']}]}]}"
    echo "scrape_configs:"
    echo "  - job_name: test"
    echo "    static_configs: [{targets: [$targets]}]"
    [ -z "$auth" ] || echo "$auth"
    [ -z "$jobs" ] || echo "$jobs"
  } >"$dir/prometheus.yml"
  prometheus --config.file="$dir/prometheus.yml" --storage.tsdb.path="$dir/data" \
    --web.listen-address="127.0.0.1:$port" </dev/null >"$dir/server.log" 2>&1 &
  echo $! >"$dir/prometheus.pid"
  if wait_http "$url/-/ready" "$dir/prometheus.pid" 400; then # 20 s
    echo "$url"
    return 0
  fi
  tail -n 20 "$dir/server.log" >&2 2>/dev/null || true
  stop "$dir" >/dev/null 2>&1 || true
  die "cannot start prometheus in $dir on port $port"
}

stop() { stop_and_remove "$1" "$1/prometheus.pid"; }

case "${1:-}" in
  start) [ $# -ge 3 ] || usage; start "${@:2}" ;;
  stop) [ $# -eq 2 ] || usage; stop "$2" ;;
  *) usage ;;
esac
