#!/usr/bin/env bash
# A throwaway Alertmanager (Debian's `prometheus-alertmanager`) for tests and demos.
#
#   scripts/alertmanager.sh start DIR PORT WEBHOOK_URL TOKEN_FILE
#       start alertmanager on 127.0.0.1:PORT (data in DIR/data, log in DIR/server.log) with one
#       route to a webhook receiver at WEBHOOK_URL (sreh's POST /v1/alerts/alertmanager),
#       authenticated with the bearer token in TOKEN_FILE, grouping by alertname and service
#       (group_wait 1s, group_interval 1s; a critical alert inhibits the service's warnings);
#       wait until it is ready; print http://127.0.0.1:PORT
#   scripts/alertmanager.sh stop DIR
#       stop it (SIGTERM, SIGKILL after 10 s), remove DIR
#
# Both are idempotent: start with a running server in DIR prints its URL; stop without one only
# removes DIR. DIR must be under /tmp.
set -euo pipefail

script=alertmanager.sh
# shellcheck source=lib/throwaway.sh
. "$(dirname "$0")/lib/throwaway.sh"

usage() { die "usage: $0 start DIR PORT WEBHOOK_URL TOKEN_FILE | stop DIR"; }

start() {
  local dir="$1" port="$2" webhook="$3" token_file="$4"
  check_dir "$dir"
  check_port "$port"
  command -v prometheus-alertmanager >/dev/null ||
    die "prometheus-alertmanager not found (scripts/setup.sh installs it)"
  [ -r "$token_file" ] || die "cannot read the token file '$token_file'"
  local url="http://127.0.0.1:$port"
  mkdir -p "$dir"
  if running_pid "$dir/alertmanager.pid" >/dev/null; then
    echo "$url"
    return 0
  fi
  cat >"$dir/alertmanager.yml" <<CONF
route:
  receiver: sreh
  group_by: [alertname, service]
  group_wait: 1s
  group_interval: 1s
  repeat_interval: 1h
# A critical alert of a service mutes its warnings (the page says it all).
inhibit_rules:
  - source_matchers: [severity="critical"]
    target_matchers: [severity="warning"]
    equal: [service]
receivers:
  - name: sreh
    webhook_configs:
      - url: '$webhook'
        send_resolved: true
        http_config:
          authorization: {credentials_file: '$token_file'}
CONF
  # No cluster (a test server alone); the cluster port would be taken by parallel tests.
  prometheus-alertmanager --config.file="$dir/alertmanager.yml" --storage.path="$dir/data" \
    --web.listen-address="127.0.0.1:$port" --cluster.listen-address= \
    </dev/null >"$dir/server.log" 2>&1 &
  echo $! >"$dir/alertmanager.pid"
  if wait_http "$url/-/ready" "$dir/alertmanager.pid" 400; then # 20 s
    echo "$url"
    return 0
  fi
  tail -n 20 "$dir/server.log" >&2 2>/dev/null || true
  stop "$dir" >/dev/null 2>&1 || true
  die "cannot start alertmanager in $dir on port $port"
}

stop() { stop_and_remove "$1" "$1/alertmanager.pid"; }

case "${1:-}" in
  start) [ $# -eq 5 ] || usage; start "${@:2}" ;;
  stop) [ $# -eq 2 ] || usage; stop "$2" ;;
  *) usage ;;
esac
