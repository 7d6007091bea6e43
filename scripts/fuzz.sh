#!/usr/bin/env bash
# Builds the fuzz preset (clang, libFuzzer, ASan + UBSan) and runs every fuzz target for a
# bounded time, starting from its checked-in corpus (tests/fuzz/corpus/<target>). Prints a table
# of execs, exec/s, coverage (edges: libFuzzer's `cov`), features and crashes per target.
#
#   scripts/fuzz.sh [TARGET...]          # default: every target
#   SREH_FUZZ_SECONDS=60 scripts/fuzz.sh # time per target (default 20)
#   SREH_FUZZ_RUNS=20000 scripts/fuzz.sh # a fixed number of inputs with a fixed seed instead:
#                                        # the same inputs every time (what CI runs)
#
# New interesting inputs go to build/fuzz/corpus/<target> (the checked-in corpus is not
# changed); a crash is saved under build/fuzz/crashes/<target>/ and the script exits 1 naming
# it and the command that replays it. Copy such an input into tests/fuzz/regressions/<target>/
# once fixed: every other build replays it (CTest fuzz.replay.<target>).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${SREH_FUZZ_SECONDS:-20}"
all=(json_parse codecs goal_request llm_streams url last_event_id sse_frame node_config policy topology
  scenario knowledge_base kb_condition work_template flow_file alertmanager_webhook)
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${all[@]}")
if ! build_log="$(scripts/build.sh fuzz "${targets[@]/#/sreh_fuzz_}" 2>&1)"; then
  echo "$build_log" | grep -v 'GLOB mismatch' | tail -40
  echo "fuzz: the build failed" >&2
  exit 1
fi
status=0
printf '%-20s %10s %8s %6s %7s %7s\n' target execs exec/s edges features crashes
for t in "${targets[@]}"; do
  work="build/fuzz/corpus/$t"
  crashes="build/fuzz/crashes/$t"
  rm -rf "$crashes"
  mkdir -p "$work" "$crashes"
  log="build/fuzz/$t.log"
  rc=0
  if [ -n "${SREH_FUZZ_RUNS:-}" ]; then
    bound=(-runs="$SREH_FUZZ_RUNS" -seed=1)
  else
    bound=(-max_total_time="$seconds")
  fi
  "build/fuzz/tests/fuzz/sreh_fuzz_$t" "${bound[@]}" -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="$crashes/" -print_final_stats=1 "$work" "tests/fuzz/corpus/$t" \
    >"$log" 2>&1 || rc=$?
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
  rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
  edges=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || echo 0)
  ft=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || echo 0)
  found=$(find "$crashes" -type f | wc -l)
  printf '%-20s %10s %8s %6s %7s %7s\n' "$t" "$execs" "$rate" "$edges" "$ft" "$found"
  if [ "$rc" -ne 0 ] || [ "$found" -gt 0 ]; then
    status=1
    echo "  $t failed (exit $rc): see $log"
    for f in "$crashes"/*; do
      [ -e "$f" ] && echo "  replay: build/fuzz/tests/fuzz/sreh_fuzz_$t $f"
    done
  fi
done
exit $status
