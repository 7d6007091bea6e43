# Shared by the scripts that run a throwaway server for tests (pg.sh, nats.sh, prometheus.sh):
# sourced after setting `script` (the name in messages).

die() { echo "$script: $*" >&2; exit 1; }

# A server's DIR must be under /tmp (it is removed on stop).
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

# The pid in PIDFILE when that process is alive.
running_pid() {
  local pidfile="$1" pid
  [ -f "$pidfile" ] || return 1
  pid="$(cat "$pidfile")"
  [[ "$pid" =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null && echo "$pid"
}

# Polls `curl -sf URL` every 50 ms, TRIES times at most, while the process of PIDFILE lives;
# succeeds when it answered.
wait_http() {
  local url="$1" pidfile="$2" tries="$3" i
  for i in $(seq 1 "$tries"); do
    curl -sf "$url" >/dev/null 2>&1 && return 0
    running_pid "$pidfile" >/dev/null || return 1
    sleep 0.05
  done
  return 1
}

# Stops the process of PIDFILE (SIGTERM, SIGKILL after 10 s) and removes DIR; idempotent.
stop_and_remove() {
  local dir="$1" pidfile="$2" pid i
  check_dir "$dir"
  [ -d "$dir" ] || return 0
  if pid="$(running_pid "$pidfile")"; then
    kill -TERM "$pid" 2>/dev/null || true
    for i in $(seq 1 100); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -rf "$dir"
}
