#!/usr/bin/env python3
"""Works figures (issue 12): Works created per second through the API (POST /v1/works, each
Work committed and its run started), and the memory an idle, passivated Work costs a node with
100,000 of them open.

    python3 bench/works_bench.py [WORKS=100000] [CLIENTS=8] [WARMUP=10000]

Each Work's run is one test.echo step (scripted provider), so it ends at once and the Work sits
in `mitigating` with its resolve SLA timer armed, its actor passivated (passivate_after: 1s).
Memory per idle Work is the node's RSS growth over the WORKS Works made after WARMUP Works
(so allocator and SQLite caches are warm), once every run has ended and every Work actor has
passivated. SREH_BIN picks the binary (default build/release/app/sreh)."""

import http.client
import json
import os
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "e2e"))
sys.path.insert(0, os.path.dirname(__file__))
import harness  # noqa: E402
from overload_bench import rss_kb  # noqa: E402

TEMPLATE = """template: bench
kind: incident
fields:
  service: {type: string, required: true}
  severity: {type: choice, values: [sev1, sev2, sev3], default: sev3}
sla: {acknowledge: 15m, resolve: 4h}
run: {goal: "fix {service}"}
double_texting: join
"""


def create_many(port, n, clients, offset):
    """Makes n Works with `clients` keep-alive connections; returns the seconds it took."""
    errors = []
    per = n // clients

    def worker(k):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        headers = {"Authorization": f"Bearer {harness.TOKEN}", "Content-Type": "application/json"}
        for i in range(per):
            body = json.dumps({"template": "bench",
                               "fields": {"service": f"svc-{offset + k * per + i}"}})
            conn.request("POST", "/v1/works", body=body, headers=headers)
            r = conn.getresponse()
            r.read()
            if r.status != 201:
                errors.append(r.status)
                return
        conn.close()

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(clients)]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    took = time.monotonic() - t0
    if errors:
        raise SystemExit(f"POST /v1/works failed: {errors[:5]}")
    return per * clients, took


def settle(node, pid, runs):
    """Waits until `runs` runs finished and RSS stopped moving (actors passivated)."""
    harness.wait_until(lambda: node.stats()["kernel"]["finished"] >= runs, 600, "runs finished")
    last, stable = rss_kb(pid), 0
    while stable < 3:
        time.sleep(1)  # waiting for the passivation sweep; measured, not synchronised on
        now = rss_kb(pid)
        stable = stable + 1 if abs(now - last) < 256 else 0
        last = now
    return last


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    clients = int(sys.argv[2]) if len(sys.argv) > 2 else 8
    warmup = int(sys.argv[3]) if len(sys.argv) > 3 else 10_000
    with harness.TempDir() as d:
        tdir = os.path.join(d, "templates")
        os.makedirs(tdir)
        with open(os.path.join(tdir, "bench.yaml"), "w") as f:
            f.write(TEMPLATE)
        node = harness.Node(d, config_extra=(
            f"works:\n  templates: {tdir}\n  passivate_after: 1s\n"
            "model:\n  provider: scripted\n  script:\n    - {tool: test.echo, args: {}}\n"))
        node.start()
        pid = node.proc.pid
        made, took = create_many(node.port, warmup, clients, 0)
        base = settle(node, pid, made)
        made2, took2 = create_many(node.port, n, clients, made)
        after = settle(node, pid, made + made2)
        per_work = (after - base) * 1024 / made2
        print(f"warm-up: {made} Works in {took:.1f} s ({made / took:.0f}/s)")
        print(f"measured: {made2} Works in {took2:.1f} s ({made2 / took2:.0f}/s) with {clients} "
              f"clients")
        print(f"RSS {base} kB after the warm-up, {after} kB with {made + made2} Works open: "
              f"{per_work:.0f} bytes per idle Work")
        print(f"reproduce: python3 bench/works_bench.py {n} {clients} {warmup}")
        print(json.dumps({"bench": "works", "works": made2, "clients": clients,
                          "creates_per_s": round(made2 / took2), "rss_kb_base": base,
                          "rss_kb_after": after, "bytes_per_idle_work": round(per_work)}))
        node.stop()


if __name__ == "__main__":
    main()
