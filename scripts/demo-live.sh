#!/usr/bin/env bash
# The live demo on real servers (docs/prometheus.md): a node whose sandbox world plays production
# and exports its metrics, a real Prometheus scraping them (and the node's own /metrics) with the
# alert rules of examples/live/rules.yml, and a real Alertmanager posting what fires to the
# node's receiver. A fault of the scenario fires an alert, an incident Work opens, the reasoner
# diagnoses through prometheus.query and mitigates through the sandbox's write tools (the
# rollback waits for your approval: `sreh approvals`, `sreh approve ID`), the alert resolves in
# Prometheus and Alertmanager and the Work closes.
#
#   scripts/demo-live.sh [SCENARIO]     (default examples/scenarios/shop-checkout-bad-deploy.yaml)
#
# Ports: SREH_PORT (7070), PROMETHEUS_PORT (9090), ALERTMANAGER_PORT (9093). Everything lives
# in a temp dir that is removed, with the servers, when the script ends (Ctrl-C).
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
scenario="$(realpath "${1:-examples/scenarios/shop-checkout-bad-deploy.yaml}")"
[ -r "$scenario" ] || { echo "demo-live.sh: cannot read the scenario '$scenario'" >&2; exit 1; }
sreh_port="${SREH_PORT:-7070}" prom_port="${PROMETHEUS_PORT:-9090}" am_port="${ALERTMANAGER_PORT:-9093}"

die() { echo "demo-live.sh: $*" >&2; exit 1; }
# A port something already listens on would answer in place of ours (or make ours fail to bind).
for p in "sreh SREH_PORT $sreh_port" "Prometheus PROMETHEUS_PORT $prom_port" \
  "Alertmanager ALERTMANAGER_PORT $am_port"; do
  set -- $p
  if (exec 3<>"/dev/tcp/127.0.0.1/$3") 2>/dev/null; then
    owner="$(ss -Hltnp "sport = :$3" 2>/dev/null | grep -o 'users:(("[^"]*",pid=[0-9]*' | \
      head -1 | sed 's/users:(("\(.*\)",pid=\(.*\)/ by \1 (pid \2)/' || true)"
    die "port $3 (for $1) is in use$owner: stop that or set $2=PORT"
  fi
done

scripts/setup.sh
scripts/build.sh release sreh
dir="$(mktemp -d /tmp/sreh-live.XXXXXX)"
sreh_pid=""
cleanup() {
  local status=$?
  [ -z "$sreh_pid" ] || kill "$sreh_pid" 2>/dev/null || true
  scripts/prometheus.sh stop "$dir/prometheus" >/dev/null 2>&1 || true
  scripts/alertmanager.sh stop "$dir/alertmanager" >/dev/null 2>&1 || true
  [ -z "$sreh_pid" ] || wait "$sreh_pid" 2>/dev/null || true
  # A failure says why before the temp dir (and the node's log in it) goes.
  if [ "$status" -ne 0 ] && [ "$status" -ne 130 ] && [ -s "$dir/sreh.log" ]; then
    echo "demo-live.sh: failed (exit status $status); the end of the node's log:" >&2
    tail -n 20 "$dir/sreh.log" >&2
  fi
  rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# A token for you (admin), one Alertmanager posts with and one Prometheus scrapes with.
for who in sre alertmanager prometheus; do
  head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$dir/$who.token"
  chmod 600 "$dir/$who.token"
  export "SREH_DEMO_${who^^}_SHA256=$(tr -d '\n' <"$dir/$who.token" | sha256sum | cut -d' ' -f1)"
done
export SREH_DEMO_SCENARIO="$scenario"
export SREH_DEMO_PROMETHEUS="http://127.0.0.1:$prom_port"
export SREH_DEMO_ALERTMANAGER="http://127.0.0.1:$am_port"
sreh=build/release/app/sreh
"$sreh" serve --config examples/live/sreh.yaml --listen "127.0.0.1:$sreh_port" \
  --data-dir "$dir/data" >"$dir/sreh.log" 2>&1 &
sreh_pid=$!
ready=""
for _ in $(seq 200); do # 20 s
  curl -fsS "http://127.0.0.1:$sreh_port/healthz" >/dev/null 2>&1 && { ready=1; break; }
  kill -0 "$sreh_pid" 2>/dev/null || die "sreh serve exited at start"
  sleep 0.1
done
[ -n "$ready" ] || die "sreh serve did not answer on 127.0.0.1:$sreh_port within 20 s"
scripts/alertmanager.sh start "$dir/alertmanager" "$am_port" \
  "http://127.0.0.1:$sreh_port/v1/alerts/alertmanager" "$dir/alertmanager.token" >/dev/null
mkdir -p "$dir/prometheus"
cp examples/live/rules.yml "$dir/prometheus/rules.yml"
scripts/prometheus.sh start --token-file "$dir/prometheus.token" --alertmanager "127.0.0.1:$am_port" \
  "$dir/prometheus" "$prom_port" "127.0.0.1:$sreh_port" "127.0.0.1:$sreh_port/sandbox/metrics" \
  >/dev/null

cat <<TEXT
live demo: scenario $(basename "$scenario")
  sreh          http://127.0.0.1:$sreh_port   (log $dir/sreh.log; your token: $dir/sre.token)
  prometheus    $SREH_DEMO_PROMETHEUS/alerts
  alertmanager  $SREH_DEMO_ALERTMANAGER/#/alerts
follow it:
  export SREH_SERVER=127.0.0.1:$sreh_port SREH_TOKEN=\$(cat $dir/sre.token)
  $root/$sreh works            # the incident Work the alert opened
  $root/$sreh approvals        # the rollback waiting for you; then: sreh approve ID
  $root/$sreh work show ID     # its runs, SLA clocks, done-criteria and timeline
Ctrl-C stops everything.
TEXT
wait "$sreh_pid" || die "sreh serve exited with status $?"
