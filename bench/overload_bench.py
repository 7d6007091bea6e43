#!/usr/bin/env python3
"""Overload figures (issue 15, point 3): a node under a flood of half-open connections (a
partial request line each, from 127.0.0.1), measured from another address (127.0.0.2):
latency of /healthz and of an authenticated GET /v1/runs, the node's RSS, what the front did
(shed, limited), and how long a partial header holds its connection.

    python3 bench/overload_bench.py [FLOOD=1100] [REQUESTS=200]

SREH_BIN picks the binary (default build/release/app/sreh)."""

import os
import resource
import socket
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "e2e"))
import harness  # noqa: E402
import test_overload as t  # noqa: E402


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p))]


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def latencies(port, path, n):
    out = []
    for _ in range(n):
        t0 = time.monotonic()
        status, _, _ = t.call(port, "GET", path, source="127.0.0.2", timeout=5)
        assert status == 200, (path, status)
        out.append((time.monotonic() - t0) * 1000)
    return out


def main():
    flood_n = int(sys.argv[1]) if len(sys.argv) > 1 else 1100
    requests = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    resource.setrlimit(resource.RLIMIT_NOFILE, (resource.getrlimit(resource.RLIMIT_NOFILE)[1],) * 2)
    with harness.TempDir() as d:
        node = harness.Node(d, config_extra="limits:\n  header_timeout_ms: 600000\n").start()
        idle = rss_kb(node.proc.pid)
        quiet = {p: latencies(node.port, p, requests) for p in ("/healthz", "/v1/runs")}
        socks = t.flood(node.port, flood_n)
        harness.wait_until(lambda: t.stats(node.port, "127.0.0.2")["connections"] >= 1000, 30,
                           "the flood to be accepted")
        loaded = {p: latencies(node.port, p, requests) for p in ("/healthz", "/v1/runs")}
        rss = rss_kb(node.proc.pid)
        front = t.stats(node.port, "127.0.0.2")
        t.close_all(socks)
        node.stop()
        os.makedirs(os.path.join(d, "b"))
        node = harness.Node(os.path.join(d, "b")).start()  # the default header timeout
        s = socket.create_connection(("127.0.0.1", node.port))
        s.sendall(b"GET /healthz HTT")
        s.settimeout(30)
        t0 = time.monotonic()
        s.recv(1)
        held = time.monotonic() - t0
        s.close()
        node.stop()
    print(f"# {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} {os.cpu_count()} cores, "
          f"load {os.getloadavg()[0]:.2f}; {harness.SREH}")
    print(f"| | quiet | {flood_n} half-open connections |\n|---|---|---|")
    for p in ("/healthz", "/v1/runs"):
        q, l = quiet[p], loaded[p]
        print(f"| GET {p} p50 / p99 ms | {statistics.median(q):.2f} / {pct(q, 0.99):.2f} | "
              f"{statistics.median(l):.2f} / {pct(l, 0.99):.2f} |")
    print(f"| node RSS | {idle / 1024:.1f} MiB | {rss / 1024:.1f} MiB |")
    print(f"front under the flood: {front}")
    print(f"a partial request line held its connection {held:.2f} s (default header_timeout_ms 5000)")
    print(f"reproduce: python3 bench/overload_bench.py {flood_n} {requests}")


if __name__ == "__main__":
    main()
