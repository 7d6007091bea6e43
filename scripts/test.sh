#!/usr/bin/env bash
# One command for a fresh Debian 12 machine: installs what is missing, builds, and runs every
# test (unit, integration, e2e) with CTest. `scripts/test.sh -L unit` runs one label;
# SREH_SANITIZE=1 (CI) runs the unit and integration tests in the debug preset (ASan + UBSan)
# instead, and the rest (e2e, lint, fuzz replays) in release. A throwaway PostgreSQL
# (scripts/pg.sh) runs on a free port for the integration.pg.* tests (SREH_PG_URL) and is
# removed on exit; SREH_PG_FAST=1 starts it without fsync for speed. Likewise a throwaway
# nats-server with JetStream (scripts/nats.sh) for the relay tests (SREH_NATS_URL).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
release_only=()
if [ "${SREH_SANITIZE:-0}" = "1" ]; then
  # The unit and integration suites then run under ASan + UBSan (below) instead of in the
  # release build as well: their ~140 objects are a third of a release build's compile time.
  scripts/build.sh release sreh
  mapfile -t targets < <(ninja -C build/release -t targets all |
    sed -n 's/^\(sreh[a-z0-9_]*\): phony$/\1/p' | grep -vx -e sreh_unit_tests -e sreh_integration_tests)
  scripts/build.sh release "${targets[@]}"
  release_only=(-LE 'unit|integration')
else
  scripts/build.sh release
fi
pg_dir="$(mktemp -d /tmp/sreh-pg-XXXXXX)"
nats_dir="$(mktemp -d /tmp/sreh-nats-XXXXXX)"
trap 'scripts/pg.sh stop "$pg_dir" || true; scripts/nats.sh stop "$nats_dir" || true' EXIT
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
pg_port="$(free_port)"
SREH_PG_URL="$(scripts/pg.sh start "$pg_dir" "$pg_port")"
export SREH_PG_URL
SREH_NATS_URL="$(scripts/nats.sh start "$nats_dir" "$(free_port)" "$(free_port)")"
export SREH_NATS_URL
status=0
ctest --test-dir build/release --output-on-failure -j 2 "${release_only[@]}" "$@" || status=$?
if [ "${SREH_SANITIZE:-0}" = "1" ]; then
  scripts/build.sh debug sreh_unit_tests sreh_integration_tests
  ctest --test-dir build/debug --output-on-failure -j 2 -L 'unit|integration' || status=$?
fi
exit $status
