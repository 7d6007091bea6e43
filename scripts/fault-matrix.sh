#!/usr/bin/env bash
# The fault matrix (tests/faults/matrix.py; docs/architecture.md "Durability"): a node under a
# load of runs with mutating steps, and in each cell something bad happens to it — kill -9 at
# random moments (10 rounds of 200 runs), a full disk, clock jumps, a slow disk, a cluster
# member's links cut — asserted from
# the journal and the effects: no lost run, no duplicated mutating effect, no lost or duplicated
# event. Then the PostgreSQL restart and freeze and NATS restart cells (tests of their own, with
# throwaway servers).
#
#   scripts/fault-matrix.sh [CELL...]   cells: kill9 disk_full clock slow_disk partition store_partition actors pg nats
#                                       (default: all)
#
# Needs root (tmpfs for the full disk, nftables for the partition). SREH_FAULT_SEED repeats a run's random moments.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh release sreh
cells=("$@")
[ ${#cells[@]} -gt 0 ] || cells=(kill9 disk_full clock slow_disk partition store_partition actors pg nats)
node_cells=() rc=0
for c in "${cells[@]}"; do
  case "$c" in
    kill9|disk_full|clock|slow_disk|partition|store_partition|actors) node_cells+=("$c") ;;
    pg|nats) ;;
    *) echo "fault-matrix.sh: unknown cell '$c' (kill9 disk_full clock slow_disk partition store_partition actors pg nats)" >&2; exit 2 ;;
  esac
done
if [ ${#node_cells[@]} -gt 0 ]; then
  python3 tests/faults/matrix.py "${node_cells[@]}" || rc=1
fi
servers=()
for c in "${cells[@]}"; do
  case "$c" in
    pg) servers+=('e2e\.pg_restart' 'e2e\.store_freeze') ;;
    nats) servers+=('integration\.relay_nats_restart') ;;
  esac
done
if [ ${#servers[@]} -gt 0 ]; then
  regex="^($(IFS='|'; echo "${servers[*]}"))$"
  if scripts/test.sh -R "$regex"; then
    echo "ok   ${servers[*]}"
  else
    echo "FAIL ${servers[*]}"
    rc=1
  fi
fi
exit $rc
