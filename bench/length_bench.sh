#!/usr/bin/env bash
# Cost per step against the run's length: the kernel bench on SQLite at C=64 with runs of 10,
# 100 and 1,000 tool steps, each with the scripted reasoner (`--llm 0`: tool steps only) and with
# a language model answering at once (`--llm 1`: a reason step before each tool step, its
# context assembled from the whole journal). The difference is a reason step's own overhead.
# Builds alternate within each repeat; prints every figure, then the medians.
#
#   bench/length_bench.sh BUILD [BUILD_B] [REPEATS=3]    (BUILD: a build dir, e.g. build/release)
#
# Environment: LENGTHS (default "10 100 1000"), STEPS_PER_POINT (default 20000: tool steps a
# point runs, at least 64 runs).
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { sed -n 2,10p "$0" >&2; exit 2; }
builds=("$(realpath "$1")")
repeats=3
if [ $# -ge 2 ] && [ -d "$2" ]; then
  builds+=("$(realpath "$2")")
  repeats="${3:-3}"
elif [ $# -ge 2 ]; then
  repeats="$2"
fi
for d in "${builds[@]}"; do
  [ -x "$d/bench/sreh_bench" ] || { echo "length_bench: $d has no bench/sreh_bench" >&2; exit 1; }
done
lengths="${LENGTHS:-10 100 1000}" per_point="${STEPS_PER_POINT:-20000}"
results="$(mktemp /tmp/sreh-length-XXXXXX.jsonl)"
for rep in $(seq 1 "$repeats"); do
  for len in $lengths; do
    runs=$((per_point / len))
    [ "$runs" -ge 64 ] || runs=64
    for llm in 0 1; do
      for d in "${builds[@]}"; do
        line="$("$d/bench/sreh_bench" --runs "$runs" --warmup 4 --steps "$len" --concurrency 64 \
          --inflight 0 --llm "$llm" 2>/dev/null | tail -1)"
        python3 -c '
import json, sys
d = json.loads(sys.argv[1]); r = d["results"][0]
print(json.dumps({"build": sys.argv[2], "len": int(sys.argv[3]), "llm": int(sys.argv[4]),
                  "cpu": r["cpu_us_per_step"], "sps": r["steps_per_s"], "failed": d["failed"]}))
' "$line" "$d" "$len" "$llm" | tee -a "$results"
      done
    done
  done
done
python3 - "$results" "${builds[@]}" <<'EOF'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
builds = sys.argv[2:]
print(f"\nmedians of {len(rows) // max(1, len({(r['build'], r['len'], r['llm']) for r in rows}))} "
      "runs, CPU µs per tool step (process user+sys), SQLite, C=64")
print("| build | steps per run | tool steps only | with a reason step each | reason step overhead |")
print("|---|---|---|---|---|")
for b in builds:
    for n in sorted({r["len"] for r in rows}):
        med = lambda llm: statistics.median(r["cpu"] for r in rows
                                            if r["build"] == b and r["len"] == n and r["llm"] == llm)
        failed = sum(r["failed"] for r in rows if r["build"] == b and r["len"] == n)
        note = f" ({failed} runs failed)" if failed else ""
        print(f"| {b} | {n:,} | {med(0):.1f} | {med(1):.1f} | {med(1) - med(0):.1f}{note} |")
EOF
