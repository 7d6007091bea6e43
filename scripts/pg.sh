#!/usr/bin/env bash
# A throwaway PostgreSQL 15 cluster for tests and benchmarks, without systemd.
#
#   scripts/pg.sh start DIR PORT   initdb DIR/data (if needed), start on 127.0.0.1:PORT, create database
#                                  `sreh`, print postgresql://postgres@127.0.0.1:PORT/sreh
#   scripts/pg.sh start DIR PORT --tls CADIR
#                                  the same with ssl=on: the server's certificate is CADIR/postgres.pem
#                                  (made with scripts/dev-ca.sh CADIR postgres when missing, valid
#                                  for localhost and 127.0.0.1), and TCP connections must use TLS
#                                  (pg_hba: hostssl only; a plain connection is rejected). Prints
#                                  the URL with ?sslmode=verify-full&sslrootcert=CADIR/ca.pem. A
#                                  restart (`start DIR PORT` after `halt`) keeps TLS on.
#   scripts/pg.sh stop DIR         stop it (-m immediate) and remove DIR
#   scripts/pg.sh halt DIR         stop it (-m immediate) and keep DIR: `start DIR PORT` restarts
#                                  it with its data (tests of a database outage)
#
# DIR must be under /tmp (as root the cluster runs as `postgres`, who cannot enter /root). Trust
# authentication on loopback only: never for anything but a test box. Durability stays on
# (fsync); SREH_PG_FAST=1 sets fsync=off and synchronous_commit=off for CI speed — a crash may
# then lose or corrupt data, and benchmark figures taken with it are meaningless.
set -euo pipefail

script=pg.sh
# shellcheck source=lib/throwaway.sh
. "$(dirname "$0")/lib/throwaway.sh"

bindir=""
for d in /usr/lib/postgresql/15/bin /usr/lib/postgresql/*/bin; do
  [ -x "$d/pg_ctl" ] && { bindir="$d"; break; }
done

usage() { die "usage: $0 start DIR PORT [--tls CADIR] | stop DIR | halt DIR"; }

# Runs a PostgreSQL binary as the cluster's owner (postgres when we are root).
as_owner() {
  if [ "$(id -u)" -eq 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

# Turns TLS on for the cluster in DIR: the server's certificate and key from CADIR (copied into
# DIR, owned by the server's user: PostgreSQL refuses a key others can read) and a pg_hba.conf
# that trusts loopback TLS connections only (the Unix socket stays open for this script's psql).
enable_tls() {
  local dir="$1" cadir="$2"
  [ -f "$cadir/postgres.pem" ] || "$(dirname "$0")/dev-ca.sh" "$cadir" postgres >/dev/null
  cadir="$(cd "$cadir" && pwd)"
  cp "$cadir/postgres.pem" "$dir/server.crt"
  cp "$cadir/postgres.key" "$dir/server.key"
  echo "$cadir/ca.pem" >"$dir/tls-ca"
  [ "$(id -u)" -eq 0 ] && chown postgres: "$dir/server.crt" "$dir/server.key" "$dir/tls-ca"
  chmod 600 "$dir/server.key"
  cat >"$dir/pg_hba.conf" <<HBA
local     all all              trust
hostssl   all all 127.0.0.1/32 trust
hostnossl all all 127.0.0.1/32 reject
HBA
  [ "$(id -u)" -eq 0 ] && chown postgres: "$dir/pg_hba.conf"
  return 0
}

start() {
  local dir="$1" port="$2" cadir="${3:-}"
  [ -n "$bindir" ] || die "PostgreSQL server binaries not found (apt-get install postgresql)"
  check_dir "$dir"
  [[ "$port" =~ ^[0-9]+$ ]] && [ "$port" -ge 1024 ] && [ "$port" -le 65535 ] \
    || die "PORT '$port' must be a number in 1024..65535"
  if [ "$(id -u)" -eq 0 ] && ! id postgres >/dev/null 2>&1; then
    die "user postgres missing (apt-get install postgresql creates it)"
  fi
  mkdir -p "$dir"
  [ "$(id -u)" -eq 0 ] && chown postgres: "$dir"
  chmod 700 "$dir"
  local data="$dir/data"
  if [ ! -f "$data/PG_VERSION" ]; then
    as_owner "$bindir/initdb" -D "$data" -A trust -E UTF8 --locale=C.UTF-8 --no-sync -U postgres \
      >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; die "initdb $data failed"; }
  fi
  [ -z "$cadir" ] || enable_tls "$dir" "$cadir"
  local url="postgresql://postgres@127.0.0.1:$port/sreh"
  local tls=0
  if [ -f "$dir/tls-ca" ]; then
    tls=1
    url="$url?sslmode=verify-full&sslrootcert=$(cat "$dir/tls-ca")"
  fi
  if as_owner "$bindir/pg_ctl" -D "$data" status >/dev/null 2>&1; then
    echo "$url" # already running: idempotent
    return 0
  fi
  local opts="-c listen_addresses=127.0.0.1 -k $dir -p $port -c max_connections=200"
  if [ "$tls" = 1 ]; then
    opts="$opts -c ssl=on -c ssl_cert_file=$dir/server.crt -c ssl_key_file=$dir/server.key"
    opts="$opts -c hba_file=$dir/pg_hba.conf"
  fi
  if [ "${SREH_PG_FAST:-0}" = "1" ]; then
    opts="$opts -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
  fi
  as_owner "$bindir/pg_ctl" -D "$data" -l "$dir/server.log" -w -t 30 -o "$opts" start >/dev/null \
    || { tail -n 20 "$dir/server.log" >&2 || true; die "cannot start PostgreSQL in $dir on port $port"; }
  if ! as_owner "$bindir/psql" -h "$dir" -p "$port" -U postgres -d postgres -qAt \
      -c "SELECT 1 FROM pg_database WHERE datname = 'sreh'" | grep -q 1; then
    as_owner "$bindir/psql" -h "$dir" -p "$port" -U postgres -d postgres -q \
      -c "CREATE DATABASE sreh" >/dev/null || die "cannot create database sreh"
  fi
  echo "$url"
}

halt() {
  local dir="$1"
  check_dir "$dir"
  [ -d "$dir" ] || return 0 # already gone: idempotent
  if [ -f "$dir/data/postmaster.pid" ] && [ -n "$bindir" ]; then
    as_owner "$bindir/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
  fi
}

stop() {
  halt "$1"
  rm -rf "$1"
}

case "${1:-}" in
  start)
    if [ $# -eq 5 ] && [ "$4" = "--tls" ]; then
      start "$2" "$3" "$5"
    else
      [ $# -eq 3 ] || usage
      start "$2" "$3"
    fi
    ;;
  stop) [ $# -eq 2 ] || usage; stop "$2" ;;
  halt) [ $# -eq 2 ] || usage; halt "$2" ;;
  *) usage ;;
esac
