#!/usr/bin/env bash
# The kernel benchmark against PostgreSQL (issue 5): runs of 10 trivial steps, C = 1 and 64, on
# one node and on three nodes (three sreh_bench processes sharing one database, each with its own
# node id). Starts a throwaway PostgreSQL 15 with scripts/pg.sh — durability on (fsync,
# synchronous_commit): never SREH_PG_FAST — and stops it at the end.
#
#   bench/pg_bench.sh [REPEATS=3]
#
# Environment: SREH_BENCH_BIN (default build/release/bench/sreh_bench), PG_PORT (default: a free
# port), BENCH_DIR (default: a new /tmp/sreh-pgbench-XXXXXX), RUNS_C1 (default 1000), RUNS_C64
# (default 5000), WARMUP (default 100), STEPS (default 10), NODES (default 3).
#
# Each measurement gets a fresh database (so every repeat starts from empty tables) and a fresh
# bench process. One node: sreh_bench reads the server's figures itself (pg_stat_database,
# pg_stat_wal, WAL position, CPU of the server processes) around its measured window. Three
# nodes: the processes start their work at the same wall-clock moment (--start-at), and this
# script reads the server's figures around the whole three-process run (start, warmup and
# window: every step of the run counts; exited backends have flushed their statistics). Prints
# every raw line, then a table of medians and ranges over the repeats and the command to
# reproduce; the raw JSON lines stay in BENCH_DIR/results.jsonl.
set -euo pipefail
cd "$(dirname "$0")/.."
repeats="${1:-3}"
bin="${SREH_BENCH_BIN:-build/release/bench/sreh_bench}"
runs_c1="${RUNS_C1:-1000}"
runs_c64="${RUNS_C64:-5000}"
warmup="${WARMUP:-100}"
steps="${STEPS:-10}"
nodes="${NODES:-3}"
[ -x "$bin" ] || { echo "build first: scripts/build.sh release (or set SREH_BENCH_BIN)" >&2; exit 1; }
command -v python3 >/dev/null || { echo "python3 is needed for the summary" >&2; exit 1; }
port="${PG_PORT:-$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')}"
dir="${BENCH_DIR:-$(mktemp -d /tmp/sreh-pgbench-XXXXXX)}"
mkdir -p "$dir"
pgdir="$dir/pg"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  scripts/pg.sh stop "$pgdir" >/dev/null 2>&1 || true
}
trap cleanup EXIT
[ "${SREH_PG_FAST:-0}" = "1" ] && { echo "SREH_PG_FAST=1 makes the figures meaningless: unset it" >&2; exit 1; }
url=$(scripts/pg.sh start "$pgdir" "$port")
base="${url%/*}"           # postgresql://postgres@127.0.0.1:PORT
results="$dir/results.jsonl"
: > "$results"

psql_q() { # psql_q DB SQL: one unaligned row
  local cmd=(psql -h 127.0.0.1 -p "$port" -U postgres -d "$1" -qAt -F ' ' -c "$2")
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "${cmd[@]}"; else "${cmd[@]}"; fi
}

# CPU ticks of every PostgreSQL server process (the postmaster's own, its live children's and
# what it reaped from exited ones), as "pid:ticks ... reaped:N" for pg_delta.
pg_cpu() {
  local pm
  pm=$(head -1 "$pgdir/data/postmaster.pid")
  python3 - "$pm" <<'PY'
import os, sys
pm = int(sys.argv[1])
def stat(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            s = f.read()
    except OSError:
        return None
    f = s[s.rindex(")") + 2:].split()
    return int(f[1]), int(f[11]) + int(f[12]), int(f[13]) + int(f[14])
out = []
ppid, ticks, reaped = stat(pm)
out.append(f"{pm}:{ticks}")
for d in os.listdir("/proc"):
    if d.isdigit():
        st = stat(int(d))
        if st and st[0] == pm:
            out.append(f"{d}:{st[1]}")
out.append(f"reaped:{reaped}")
print(" ".join(out))
PY
}

pg_counters() { # DB → "xacts inserted updated deleted wal_bytes wal_sync wal_fpi lsn_bytes"
  psql_q "$1" "SELECT pg_stat_clear_snapshot();" >/dev/null
  psql_q "$1" "SELECT d.xact_commit + d.xact_rollback, d.tup_inserted, d.tup_updated,
      d.tup_deleted, w.wal_bytes, w.wal_sync, w.wal_fpi,
      pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')
    FROM pg_stat_database d, pg_stat_wal w WHERE d.datname = current_database()"
}

new_db() { # new_db NAME: a fresh, empty database
  psql_q postgres "DROP DATABASE IF EXISTS $1" >/dev/null
  psql_q postgres "CREATE DATABASE $1" >/dev/null
}

echo "# $(date -u +%FT%TZ) $(nproc) cores; load before: $(uptime | sed 's/.*load average/load average/')"
echo "# PostgreSQL $(psql_q postgres 'SHOW server_version') at $url (fsync=$(psql_q postgres 'SHOW fsync'), synchronous_commit=$(psql_q postgres 'SHOW synchronous_commit'))"

for rep in $(seq 1 "$repeats"); do
  # One node: the bench reads the server's figures around its own window.
  for c in 1 64; do
    runs=$([ "$c" = 1 ] && echo "$runs_c1" || echo "$runs_c64")
    db="bench_1n_c${c}_r${rep}"
    new_db "$db"
    echo "## one node, C=$c, repeat $rep (load $(cut -d' ' -f1-3 /proc/loadavg))"
    "$bin" --store postgres --pg-url "$base/$db" --node-id bench-1 --runs "$runs" \
      --warmup "$warmup" --steps "$steps" --concurrency "$c" --inflight 0 | tee "$dir/out.txt"
    tail -1 "$dir/out.txt" | python3 -c '
import json, sys
d = json.load(sys.stdin); d.update(mode="one", rep=int(sys.argv[1]), load=sys.argv[2])
print(json.dumps(d))' "$rep" "$(cut -d' ' -f1 /proc/loadavg)" >> "$results"
  done
  # Three nodes at once on one database; the server's figures around the whole run.
  for c in 64 1; do
    runs=$([ "$c" = 1 ] && echo "$runs_c1" || echo "$runs_c64")
    db="bench_3n_c${c}_r${rep}"
    new_db "$db"
    sleep 1
    echo "## $nodes nodes, C=$c each, repeat $rep (load $(cut -d' ' -f1-3 /proc/loadavg))"
    before_c=$(pg_counters "$db"); before_cpu=$(pg_cpu)
    t0=$(date +%s.%N)
    start_at=$(( $(date +%s%3N) + 3000 ))
    pids=()
    for i in $(seq 1 "$nodes"); do
      "$bin" --store postgres --pg-url "$base/$db" --node-id "bench-$i" --pg-stats off \
        --start-at "$start_at" --runs "$runs" --warmup "$warmup" --steps "$steps" \
        --concurrency "$c" --inflight 0 > "$dir/out-$i.txt" 2>&1 &
      pids+=($!)
    done
    fail=0
    for p in "${pids[@]}"; do wait "$p" || fail=1; done
    pids=()
    t1=$(date +%s.%N)
    after_cpu=$(pg_cpu)
    sleep 1 # the backends have exited and flushed their statistics
    after_c=$(pg_counters "$db")
    for i in $(seq 1 "$nodes"); do sed "s/^/[bench-$i] /" "$dir/out-$i.txt"; done
    [ "$fail" = 0 ] || { echo "a bench process failed" >&2; exit 1; }
    python3 - "$rep" "$c" "$nodes" "$dir" "$before_c" "$after_c" "$before_cpu" "$after_cpu" \
      "$t0" "$t1" "$(cut -d' ' -f1 /proc/loadavg)" >> "$results" <<'PY'
import json, os, sys
rep, c, nodes, d, bc, ac, bcpu, acpu, t0, t1, load = sys.argv[1:]
procs = []
for i in range(1, int(nodes) + 1):
    with open(os.path.join(d, f"out-{i}.txt")) as f:
        procs.append(json.loads([l for l in f if l.startswith("{")][-1]))
b = [float(x) for x in bc.split()]; a = [float(x) for x in ac.split()]
dx = [y - x for x, y in zip(b, a)]
def cpu(s):
    live, reaped = {}, 0
    for tok in s.split():
        k, v = tok.split(":")
        if k == "reaped": reaped = int(v)
        else: live[k] = int(v)
    return live, reaped
(bl, br), (al, ar) = cpu(bcpu), cpu(acpu)
ticks = ar - br + sum(v - bl.get(k, 0) for k, v in al.items()) \
        - sum(v for k, v in bl.items() if k not in al)
pg_cpu_s = ticks / os.sysconf("SC_CLK_TCK")
total_steps = sum(p["total_steps"] for p in procs)
ours_cpu_s = sum(p["process_cpu_s"] for p in procs)
r = [p["results"][0] for p in procs]
out = {"bench": "kernel", "store": "postgres", "mode": "three", "nodes": int(nodes),
       "rep": int(rep), "load": load, "concurrency": int(c),
       "steps_per_s": sum(x["steps_per_s"] for x in r),
       "per_node": [{"node_id": p["node_id"], "steps_per_s": x["steps_per_s"],
                     "p50_us": x["p50_us"], "p99_us": x["p99_us"],
                     "cpu_us_per_step": x["cpu_us_per_step"]} for p, x in zip(procs, r)],
       "p50_us_max": max(x["p50_us"] for x in r), "p99_us_max": max(x["p99_us"] for x in r),
       "whole_run_s": float(t1) - float(t0), "total_steps": total_steps,
       "pg_xacts_per_step": dx[0] / total_steps,
       "pg_rows_per_step": (dx[1] + dx[2] + dx[3]) / total_steps,
       "pg_inserted_per_step": dx[1] / total_steps, "pg_updated_per_step": dx[2] / total_steps,
       "pg_stat_wal_bytes_per_step": dx[4] / total_steps,
       "pg_wal_syncs_per_step": dx[5] / total_steps, "pg_wal_fpi_per_step": dx[6] / total_steps,
       "pg_wal_bytes_per_step": dx[7] / total_steps,
       "cpu_us_per_step": ours_cpu_s * 1e6 / total_steps,
       "pg_cpu_us_per_step": pg_cpu_s * 1e6 / total_steps,
       "total_cpu_us_per_step": (ours_cpu_s + pg_cpu_s) * 1e6 / total_steps,
       "failed": sum(p["failed"] for p in procs)}
print(json.dumps(out))
PY
    tail -1 "$results"
  done
done

echo "# load after: $(uptime | sed 's/.*load average/load average/')"
python3 - "$results" "$repeats" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
def flat(r):
    if r["mode"] == "one":
        x = dict(r["results"][0]); x.update(mode="one", nodes=1); return x
    return r
rows = [flat(r) for r in rows]
def fig(sel, key, fmt="{:.0f}"):
    v = [r[key] for r in sel if key in r]
    if not v: return "n/a"
    m = statistics.median(v)
    return fmt.format(m) + (f" ({fmt.format(min(v))}–{fmt.format(max(v))})" if len(v) > 1 else "")
print(f"\nmedian (min–max) of {sys.argv[2]} repeat(s); one node: figures of its measured window; "
      "three nodes: steps/s summed over the processes, p50/p99 the worst process's, "
      "server figures and CPU over the whole three-process run")
cols = [("steps/s", "steps_per_s", "{:.0f}"), ("p50 us", "p50_us", "{:.0f}"),
        ("p99 us", "p99_us", "{:.0f}"), ("cpu ours us/step", "cpu_us_per_step", "{:.1f}"),
        ("cpu pg us/step", "pg_cpu_us_per_step", "{:.1f}"),
        ("cpu total us/step", "total_cpu_us_per_step", "{:.1f}"),
        ("pg txns/step", "pg_xacts_per_step", "{:.3f}"), ("pg rows/step", "pg_rows_per_step", "{:.2f}"),
        ("WAL B/step", "pg_wal_bytes_per_step", "{:.0f}"),
        ("WAL syncs/step", "pg_wal_syncs_per_step", "{:.3f}")]
for mode, nodes in (("one", 1), ("three", None)):
    for c in (1, 64):
        sel = [r for r in rows if r["mode"] == mode and r["concurrency"] == c]
        if not sel: continue
        label = f"{'1 node' if mode == 'one' else str(sel[0]['nodes']) + ' nodes'}, C={c}"
        print(f"\n{label}:")
        for name, key, fmt in cols:
            k = key
            if mode == "three" and key in ("p50_us", "p99_us"): k = key.replace("_us", "_us_max")
            print(f"  {name:18} {fig(sel, k, fmt)}")
        if mode == "three":
            for r in sel:
                print("  repeat {}: ".format(r["rep"]) + ", ".join(
                    f"{p['node_id']} {p['steps_per_s']:.0f} steps/s p50 {p['p50_us']:.0f} p99 {p['p99_us']:.0f} us"
                    for p in r["per_node"]))
        print(f"  failed runs: {sum(r.get('failed', 0) for r in sel)}")
PY
echo
echo "raw results: $results"
echo "reproduce: RUNS_C1=$runs_c1 RUNS_C64=$runs_c64 WARMUP=$warmup STEPS=$steps NODES=$nodes bench/pg_bench.sh $repeats"
