#!/usr/bin/env bash
# Before/after figures of two builds on this machine: the kernel bench on SQLite and on a
# throwaway PostgreSQL (one node, C = 1 and 64), and the wall time of `sreh eval` over the
# public scenarios. The two builds alternate within each repeat (A, B, A, B, ...), so that a
# change of load on a shared box touches both alike; prints every figure and then the medians.
#
#   bench/ab.sh BUILD_A BUILD_B [REPEATS=3]     (BUILD: a build dir, e.g. build/release)
#
# Environment: RUNS_C1 (default 1000), RUNS_C64 (default 5000), WARMUP (default 100),
# SCENARIOS (default examples/scenarios), SREH_AB_PG=0 to skip PostgreSQL.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { sed -n 2,10p "$0" >&2; exit 2; }
a="$(realpath "$1")" b="$(realpath "$2")" repeats="${3:-3}"
for d in "$a" "$b"; do
  [ -x "$d/bench/sreh_bench" ] && [ -x "$d/app/sreh" ] ||
    { echo "ab: $d has no bench/sreh_bench or app/sreh: build it first" >&2; exit 1; }
done
runs_c1="${RUNS_C1:-1000}" runs_c64="${RUNS_C64:-5000}" warmup="${WARMUP:-100}"
scenarios="${SCENARIOS:-examples/scenarios}"
dir="$(mktemp -d /tmp/sreh-ab-XXXXXX)"
chmod 755 "$dir" # the throwaway PostgreSQL runs as user postgres
results="$dir/results.jsonl"
pgdir="$dir/pg"
use_pg="${SREH_AB_PG:-1}"
trap '[ "$use_pg" = 1 ] && scripts/pg.sh stop "$pgdir" >/dev/null 2>&1; true' EXIT
if [ "$use_pg" = 1 ]; then
  port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
  url="$(scripts/pg.sh start "$pgdir" "$port")"
  base="${url%/*}"
fi
psql_q() {
  local cmd=(psql -h 127.0.0.1 -p "$port" -U postgres -d postgres -qAt -c "$1")
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "${cmd[@]}"; else "${cmd[@]}"; fi
}
record() { # record BUILD WHAT JSON-LINE
  python3 -c '
import json, sys
d = json.loads(sys.argv[3])
for r in d["results"]:
    print(json.dumps({"build": sys.argv[1], "what": sys.argv[2], "c": r["concurrency"],
                      "steps_per_s": r["steps_per_s"], "p99_us": r["p99_us"],
                      "cpu_us_per_step": r["cpu_us_per_step"]}))' "$1" "$2" "$3" | tee -a "$results"
}
echo "# $(date -u +%FT%TZ) $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); A=$a B=$b"
for rep in $(seq 1 "$repeats"); do
  for build in "$a" "$b"; do
    for c in 1 64; do
      runs=$([ "$c" = 1 ] && echo "$runs_c1" || echo "$runs_c64")
      (cd "$dir" && "$build/bench/sreh_bench" --runs "$runs" --warmup "$warmup" \
        --concurrency "$c" --inflight 0) >"$dir/out.txt" 2>&1
      record "$build" sqlite "$(tail -1 "$dir/out.txt")"
      if [ "$use_pg" = 1 ]; then
        psql_q "DROP DATABASE IF EXISTS ab" >/dev/null
        psql_q "CREATE DATABASE ab" >/dev/null
        "$build/bench/sreh_bench" --store postgres --pg-url "$base/ab" --node-id ab --runs \
          "$((runs / 3))" --warmup "$warmup" --concurrency "$c" --inflight 0 >"$dir/out.txt" 2>&1
        record "$build" postgres "$(tail -1 "$dir/out.txt")"
      fi
    done
    t0=$(date +%s.%N)
    "$build/app/sreh" eval $scenarios >"$dir/eval.txt" 2>&1 || { cat "$dir/eval.txt"; exit 1; }
    t1=$(date +%s.%N)
    python3 -c 'import json,sys; print(json.dumps({"build": sys.argv[1], "what": "eval", "c": 0,
      "wall_s": round(float(sys.argv[3]) - float(sys.argv[2]), 3)}))' "$build" "$t0" "$t1" |
      tee -a "$results"
  done
done
python3 - "$results" "$a" "$b" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
a, b = sys.argv[2], sys.argv[3]
def med(build, what, c, key):
    xs = [r[key] for r in rows if r["build"] == build and r["what"] == what and r["c"] == c]
    return (statistics.median(xs), min(xs), max(xs)) if xs else None
print(f"\n| | A: {a} | B: {b} |\n|---|---|---|")
for what in ("sqlite", "postgres"):
    for c in (1, 64):
        for key, unit in (("steps_per_s", "steps/s"), ("p99_us", "p99 µs"), ("cpu_us_per_step", "CPU µs/step")):
            ma, mb = med(a, what, c, key), med(b, what, c, key)
            if ma and mb:
                f = lambda m: f"{m[0]:,.6g} ({m[1]:,.6g}–{m[2]:,.6g})"
                print(f"| {what} C={c} {unit} | {f(ma)} | {f(mb)} |")
ma, mb = med(a, "eval", 0, "wall_s"), med(b, "eval", 0, "wall_s")
print(f"| sreh eval wall s | {ma[0]:.2f} ({ma[1]:.2f}–{ma[2]:.2f}) | {mb[0]:.2f} ({mb[1]:.2f}–{mb[2]:.2f}) |")
PY
echo "medians (ranges) of $repeats alternating repeats; raw lines in $results"
echo "reproduce: RUNS_C1=$runs_c1 RUNS_C64=$runs_c64 WARMUP=$warmup bench/ab.sh $1 $2 $repeats"
