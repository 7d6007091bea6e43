"""PostgreSQL stops (immediate shutdown) in the middle of runs on a two-node cluster and comes
back after longer than a lease: /readyz says not ready meanwhile, the nodes log the outage in a
few rate-limited lines (not one per run per retry), nobody's runs are claimed by the other node
after the restart (leases are renewed before claims resume), and every run finishes with each
side effect exactly once and a gap-free event sequence. And PostgreSQL hangs (SIGSTOP): reads and
probes waiting on it do not take the HTTP threads with them."""

import collections
import json
import os
import signal
import threading
import time

from cluster_harness import Cluster
from harness import TempDir, run_tests, wait_until, sse_events

RUNS = 40
SCRIPT = """model:
  provider: scripted
  script:
    - {tool: test.record, args: {action: drain}}
    - {tool: test.sleep, args: {ms: 1500}}
    - {tool: test.record, args: {action: restart}}
    - {tool: test.sleep, args: {ms: 200}}
    - {tool: test.record, args: {action: scale}}
limits:
  tool_threads: 64
"""
OUTAGE_S = 3.0  # longer than the lease (1.5 s)


def readyz(node):
    try:
        status, _, body = node.request("GET", "/readyz", timeout=5)
        return status, body.decode(errors="replace")
    except OSError as e:
        return 0, str(e)


def test_postgres_restart_mid_runs():
    with TempDir() as d:
        c = Cluster(d, names=("node-a", "node-b"), node_extra=SCRIPT).start_all()
        a, b = c.nodes["node-a"], c.nodes["node-b"]
        ids = [(a, b)[i % 2].submit(f"pg restart run {i}", key=f"pgr-{i}") for i in range(RUNS)]
        owners_before = {r: a.run(r)["node_id"] for r in ids}
        # Stop the database while the runs sleep between their first and second side effect.
        wait_until(lambda: sum(1 for r in ids if a.run(r)["steps"] >= 2) >= RUNS // 2, 20,
                   "runs to be mid-flight")
        log_sizes = {n: len(open(n.log_path, "rb").read()) for n in (a, b)}
        c.pg.stop_hard()
        stopped = time.time()
        for n in (a, b):
            status, body = wait_until(lambda: (lambda s: s if s[0] == 503 else None)(readyz(n)),
                                      10, f"{n.node_id} /readyz to say not ready")
            assert "store" in body, body
        # Healthz stays up: the process is alive, only not ready.
        assert a.request("GET", "/healthz")[0] == 200
        time.sleep(max(0.0, OUTAGE_S - (time.time() - stopped)))  # the outage itself
        c.pg.restart()
        for n in (a, b):
            wait_until(lambda: readyz(n)[0] == 200, 20, f"{n.node_id} to be ready again")

        def finished():
            return all(a.run(r)["state"] in ("succeeded", "failed", "cancelled") for r in ids)
        wait_until(finished, 60, "every run to finish after the restart")
        states = collections.Counter(a.run(r)["state"] for r in ids)
        assert states == {"succeeded": RUNS}, states
        owners_after = {r: a.run(r)["node_id"] for r in ids}
        assert owners_after == owners_before, "runs moved although no node died"

        with open(c.record) as f:
            keys = [line.strip() for line in f if line.strip()]
        dup = [k for k, n in collections.Counter(keys).items() if n > 1]
        assert not dup, f"side effects executed twice: {dup[:5]}"
        assert len(keys) == 3 * RUNS, f"{len(keys)} side effects, expected {3 * RUNS}"
        for r in ids:
            seqs = [json.loads(x)["run_seq"] for _, _, x in
                    sse_events(a.port, f"/v1/runs/{r}/events", timeout=30)]
            assert seqs == list(range(1, len(seqs) + 1)), f"{r}: {seqs}"

        # The outage in the logs: said clearly, but a few lines, not one per run and retry.
        for n in (a, b):
            with open(n.log_path, "rb") as f:
                text = f.read()[log_sizes[n]:].decode(errors="replace")
            lines = [ln for ln in text.splitlines() if "failed" in ln and "postgres" in ln]
            per_kind = collections.Counter(
                "heartbeat" if "heartbeat" in ln else "commit" if "commit" in ln else "other"
                for ln in lines)
            print(f"{n.node_id}: {len(lines)} database error lines during the outage "
                  f"{dict(per_kind)}")
            for ln in lines[:12]:
                print("   ", ln[:240])
            assert lines, f"{n.node_id} logged nothing about the database being away"
            assert "127.0.0.1" in lines[0], f"the line does not name the database: {lines[0]}"
            assert all(v <= 3 for v in per_kind.values()), \
                f"{n.node_id}: not rate-limited: {dict(per_kind)}\n" + "\n".join(lines[:20])
        c.close()


def pg_processes(pg):
    """The postmaster of `pg` and its children (the backends, the writers)."""
    with open(os.path.join(pg.dir, "data", "postmaster.pid")) as f:
        master = int(f.readline())
    pids = [master]
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if ppid == master:
            pids.append(int(d))
    return pids


def test_a_hung_database_holds_no_http_thread():
    """PostgreSQL stops answering without closing its connections (SIGSTOP: the host still
    acknowledges the packets, so no TCP timeout fires). On a node with the default 2 HTTP
    threads, API reads that wait on the store and a stream of readiness probes (as from
    Kubernetes) run off the HTTP threads: one probe waits on the ping, the others answer at once
    that the store does not answer, and /healthz still answers."""
    with TempDir() as d:
        c = Cluster(d, names=("node-a",)).start_all()
        a = c.nodes["node-a"]
        assert readyz(a)[0] == 200
        pids = pg_processes(c.pg)
        stop = threading.Event()

        def prober():
            while not stop.is_set():
                readyz(a)
        def reader():
            try:
                a.request("GET", "/v1/runs", timeout=60)
            except OSError:
                pass
        probers = [threading.Thread(target=prober, daemon=True) for _ in range(3)]
        readers = [threading.Thread(target=reader, daemon=True) for _ in range(4)]
        for p in pids:
            os.kill(p, signal.SIGSTOP)
        try:
            for t in readers + probers:
                t.start()
            status, body = wait_until(
                lambda: (lambda s: s if s[0] == 503 and "has not answered" in s[1] else None)(
                    readyz(a)), 15, "/readyz to say the store does not answer")
            print(f"while PostgreSQL hangs: /readyz {status} {body[:160]}")
            assert a.request("GET", "/healthz", timeout=5)[0] == 200
        finally:
            stop.set()
            for p in pids:
                os.kill(p, signal.SIGCONT)
        wait_until(lambda: readyz(a)[0] == 200, 30, "node-a to be ready again")
        for t in readers + probers:
            t.join(timeout=30)
        c.close()


if __name__ == "__main__":
    run_tests([test_postgres_restart_mid_runs, test_a_hung_database_holds_no_http_thread])
