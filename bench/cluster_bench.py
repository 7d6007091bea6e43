#!/usr/bin/env python3
"""Cluster benchmark (issue 5): a three-node cluster on loopback with its own throwaway
PostgreSQL (durability on) and NATS JetStream, started with tests/e2e/cluster_harness.py.

  (a) relay throughput: runs of 10 trivial steps (test.echo) produce >= --relay-events events.
      "live": while they are produced, the events/s the active relay publishes (its
      `relay.offset` in GET /v1/stats, polled) next to the commit rate, and its lag. "backlog":
      NATS is stopped, the same number of events is produced, NATS is started again, and the
      relay's drain rate (offset advance per second from its first move to the head) is timed:
      that is its throughput when not limited by the commit rate.
  (b) commit-to-SSE latency: --sse-clients concurrent `GET /v1/events` streams spread over the
      nodes (non-blocking sockets on one selector; each starts at the log's head with
      Last-Event-ID), runs submitted at --sse-rate runs/s for --sse-seconds; for every event each
      client receives, receive time - event `at` (the event's creation time in the committing
      kernel, RFC 3339 with µs: creation, group commit, relay, JetStream, every node's feed, hub,
      SSE write). Checks that every client got every event of the window, gap-free.
  (c) failover: a fresh cluster whose runs sleep (--fo-steps x test.sleep --fo-sleep-ms), runs
      submitted over all nodes, the node holding the relay is killed with SIGKILL while its runs
      are mid-flight; timed: until every run it owned shows another node_id, until the relay is
      active on a survivor, until every run has finished.

Standard library only. Prints each figure with the command to reproduce, and one JSON line.

  python3 bench/cluster_bench.py [--sreh-bin build/release/app/sreh] [--phases a,b,c] ...
"""

import argparse
import calendar
import collections
import http.client
import json
import os
import resource
import selectors
import shutil
import socket
import statistics
import struct
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "e2e"))
import cluster_harness  # noqa: E402
import harness  # noqa: E402

ECHO_SCRIPT = """model:
  provider: scripted
  script:
{steps}
"""
# The SSE clients all come from 127.0.0.1: no per-client connection limit.
LIMITS = "limits:\n  max_connections_per_client: 0\n"


def echo_script(steps):
    return ECHO_SCRIPT.format(steps="\n".join(
        "    - {tool: test.echo, args: {probe: bench}}" for _ in range(steps))) + LIMITS


def sleep_script(steps, ms):
    return ECHO_SCRIPT.format(steps="\n".join(
        f"    - {{tool: test.sleep, args: {{ms: {ms}}}}}" for _ in range(steps))) + \
        LIMITS + "  tool_threads: 128\n"


def log(msg):
    print(msg, flush=True)


def load():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def _ticks(pid):
    """(ppid, utime+stime, cutime+cstime) of a process, in clock ticks; None when gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            st = f.read()
    except OSError:
        return None
    f = st[st.rindex(")") + 2:].split()
    return int(f[1]), int(f[11]) + int(f[12]), int(f[13]) + int(f[14])


def cpu_sample(c):
    """CPU ticks so far of the cluster's processes: the sreh nodes, nats-server, and PostgreSQL
    (postmaster, its live children and what it reaped)."""
    out = {}
    for n in c.nodes.values():
        if n.proc and n.proc.poll() is None:
            t = _ticks(n.proc.pid)
            if t:
                out[n.node_id] = t[1]
    try:
        with open(os.path.join(c.nats.dir, "nats.pid")) as f:
            t = _ticks(int(f.read().strip()))
            if t:
                out["nats"] = t[1]
    except (OSError, ValueError):
        pass
    try:
        with open(os.path.join(c.pg.dir, "data", "postmaster.pid")) as f:
            pm = int(f.readline().strip())
        live, reaped = {}, _ticks(pm)[2]
        live[pm] = _ticks(pm)[1]
        for d in os.listdir("/proc"):
            if d.isdigit():
                t = _ticks(int(d))
                if t and t[0] == pm:
                    live[int(d)] = t[1]
        out["postgres"] = (live, reaped)
    except (OSError, ValueError, TypeError):
        pass
    return out


def cpu_busy(a, b, secs):
    """Share of one core each process used between two samples."""
    hz = os.sysconf("SC_CLK_TCK")
    res = {}
    for k, v in b.items():
        if k not in a:
            continue
        if k == "postgres":
            (al, ar), (bl, br) = a[k], v
            t = br - ar + sum(x - al.get(p, 0) for p, x in bl.items()) \
                - sum(x for p, x in al.items() if p not in bl)
        else:
            t = v - a[k]
        res[k] = round(t / hz / secs, 2)
    return res


def pct(v, p):
    if not v:
        return float("nan")
    v = sorted(v)
    return v[int(p * (len(v) - 1))]


class Client:
    """A keep-alive HTTP client to one node (one per thread)."""

    def __init__(self, node):
        self.node = node
        self.conn = None

    def call(self, method, path, body=None):
        for attempt in range(3):
            try:
                if self.conn is None:
                    self.conn = http.client.HTTPConnection("127.0.0.1", self.node.port, timeout=30)
                h = {"Authorization": f"Bearer {harness.TOKEN}"}
                data = None
                if body is not None:
                    data = json.dumps(body).encode()
                    h["Content-Type"] = "application/json"
                self.conn.request(method, path, body=data, headers=h)
                r = self.conn.getresponse()
                payload = r.read()
                return r.status, json.loads(payload) if payload else None
            except (OSError, http.client.HTTPException):
                if self.conn:
                    self.conn.close()
                self.conn = None
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def submit(self, goal):
        status, doc = self.call("POST", "/v1/goals", {"goal": goal})
        assert status in (200, 201), f"submit on {self.node.node_id}: {status} {doc}"
        return doc["run"]["id"]

    def stats(self):
        status, doc = self.call("GET", "/v1/stats")
        assert status == 200, doc
        return doc


def submit_many(nodes, n, threads=6, prefix="bench"):
    """Submits n runs round-robin over the nodes from `threads` threads; returns the run ids."""
    ids, lock, errors = [], threading.Lock(), []
    counter = iter(range(n))

    def worker(k):
        clients = [Client(nd) for nd in nodes]
        try:
            while True:
                with lock:
                    i = next(counter, None)
                if i is None:
                    return
                rid = clients[(i + k) % len(clients)].submit(f"{prefix} {i}")
                with lock:
                    ids.append(rid)
        except Exception as e:  # noqa: BLE001 - reported by the caller
            errors.append(e)

    ts = [threading.Thread(target=worker, args=(k,), daemon=True) for k in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    if errors:
        raise errors[0]
    return ids


def finished_total(clients):
    return sum(c.stats()["kernel"]["finished"] for c in clients)


def wait_finished(clients, target, timeout):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if finished_total(clients) >= target:
            return
        time.sleep(0.1)  # polling the nodes' stats, bounded by the deadline
    raise AssertionError(f"runs not finished after {timeout}s ({finished_total(clients)} < {target})")


def active_relay(clients, timeout=20):
    deadline = time.time() + timeout
    while time.time() < deadline:
        act = [c for c in clients if c.stats().get("relay", {}).get("active")]
        if len(act) == 1:
            return act[0]
        time.sleep(0.05)  # polling, bounded by the deadline
    raise AssertionError("no single active relay")


def head_seq(client):
    return client.stats()["store"]["last_event_seq"]


# -- (a) relay throughput -----------------------------------------------------------------------

def phase_relay(c, args, out):
    nodes = list(c.nodes.values())
    clients = [Client(n) for n in nodes]
    # Events per run, from a small calibration batch.
    h0, f0 = head_seq(clients[0]), finished_total(clients)
    submit_many(nodes, 30, prefix="calibrate")
    wait_finished(clients, f0 + 30, 60)
    time.sleep(0.5)
    per_run = (head_seq(clients[0]) - h0) / 30
    runs = int(args.relay_events / per_run) + 1
    log(f"(a) {per_run:.1f} events per run of {args.steps} steps: {runs} runs for "
        f">= {args.relay_events} events")

    # Live: the relay follows the commits.
    relay = active_relay(clients)
    rc = Client(relay.node)
    samples = []
    stop = threading.Event()

    def poll():
        while not stop.is_set():
            s = rc.stats()
            samples.append((time.time(), s["relay"]["offset"], s["store"]["last_event_seq"],
                            s["relay"]["lag"]))
            time.sleep(0.05)  # sampling period

    f0 = finished_total(clients)
    head_before = head_seq(clients[0])
    poller = threading.Thread(target=poll, daemon=True)
    poller.start()
    t0, cpu0 = time.time(), cpu_sample(c)
    submit_many(nodes, runs, threads=args.submit_threads, prefix="relay-live")
    t_sub = time.time()
    wait_finished(clients, f0 + runs, 600)
    head_after = head_seq(clients[0])
    deadline = time.time() + 60
    while time.time() < deadline and (not samples or samples[-1][1] < head_after):
        time.sleep(0.05)  # until the relay reached the head
    stop.set()
    poller.join()
    t_end = next((t for t, off, _, _ in samples if off >= head_after), samples[-1][0])
    t_first = next((t for t, off, _, _ in samples if off > head_before), t0)
    events = head_after - head_before
    t_commit = next((t for t, _, h, _ in samples if h >= head_after), samples[-1][0])
    busy = cpu_busy(cpu0, cpu_sample(c), time.time() - t0)
    live = {"events": events, "runs": runs, "submit_s": t_sub - t0,
            "commit_events_per_s": events / (t_commit - t0),
            "relay_events_per_s": events / (t_end - t_first),
            "max_lag": max(s[3] for s in samples), "relay_node": relay.node.node_id,
            "cpu_busy": busy, "load": load()}
    log(f"(a) live: {events} events committed in {t_end - t0:.1f}s; relay published "
        f"{live['relay_events_per_s']:.0f} events/s (commit rate {live['commit_events_per_s']:.0f}"
        f" events/s), max lag {live['max_lag']} events; cores used {busy}; load {live['load']}")

    # Backlog: NATS away while the events are produced, then the relay drains them.
    c.nats.close()
    f0 = finished_total(clients)
    head_before = head_seq(clients[0])
    off_before = rc.stats()["relay"]["offset"]
    submit_many(nodes, runs, threads=args.submit_threads, prefix="relay-backlog")
    wait_finished(clients, f0 + runs, 600)
    head_after = head_seq(clients[0])
    off_stuck = rc.stats()["relay"]["offset"]
    backlog = head_after - off_stuck
    c.nats.start()
    t_nats, cpu0 = time.time(), cpu_sample(c)
    samples = []
    deadline = time.time() + 300
    while time.time() < deadline:
        s = rc.stats()["relay"]
        samples.append((time.time(), s["offset"]))
        if s["offset"] >= head_after:
            break
        time.sleep(0.005)  # sampling period
    assert samples[-1][1] >= head_after, f"relay did not drain: {samples[-1]} < {head_after}"
    # From the last sample still at the old offset to the first at the head: a lower bound of
    # the drain rate (it includes up to one sampling period of the reconnect).
    i_first = next(i for i, (t, off) in enumerate(samples) if off > off_stuck)
    t_start = samples[max(i_first - 1, 0)][0]
    t_last = samples[-1][0]
    drain_rate = (head_after - off_stuck) / max(t_last - t_start, 1e-3)
    t_first = samples[i_first][0]
    busy = cpu_busy(cpu0, cpu_sample(c), time.time() - t_nats)
    bl = {"backlog_events": backlog, "offset_before_outage": off_before,
          "reconnect_s": t_first - t_nats, "drain_s": t_last - t_start,
          "drain_events_per_s": drain_rate, "cpu_busy_since_nats_start": busy, "load": load()}
    log(f"(a) backlog: {backlog} events behind while NATS was down; after NATS came back the "
        f"relay moved after {bl['reconnect_s']:.2f}s and drained at {drain_rate:.0f} events/s "
        f"({bl['drain_s']:.1f}s); cores used since NATS started {busy}; load {bl['load']}")
    out["relay"] = {"live": live, "backlog": bl, "events_per_run": per_run}


# -- (b) commit-to-SSE latency ------------------------------------------------------------------

_minute_cache = {}


def at_us(s):
    """µs since the epoch of 'YYYY-MM-DDTHH:MM:SS.ffffffZ'."""
    base = _minute_cache.get(s[:16])
    if base is None:
        base = calendar.timegm(time.strptime(s[:16], "%Y-%m-%dT%H:%M")) * 1_000_000
        _minute_cache[s[:16]] = base
    return base + int(s[17:19]) * 1_000_000 + int(s[20:26])


# Linux: SO_TIMESTAMPNS (= SCM_TIMESTAMPNS) makes recvmsg return when the kernel received the
# data (for TCP, the last segment read), so a busy client loop does not add to the latency.
SO_TIMESTAMPNS = 35


class SseConn:
    __slots__ = ("sock", "node", "raw", "body", "headers_done", "chunk_left", "last_seq",
                 "count", "gaps", "status", "closed")

    def __init__(self, node, after):
        self.node = node
        self.sock = socket.create_connection(("127.0.0.1", node.port), timeout=10)
        self.sock.sendall((f"GET /v1/events HTTP/1.1\r\nHost: 127.0.0.1:{node.port}\r\n"
                           f"Authorization: Bearer {harness.TOKEN}\r\n"
                           f"Accept: text/event-stream\r\nLast-Event-ID: {after}\r\n\r\n").encode())
        self.sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        self.sock.setblocking(False)
        self.raw = b""        # undecoded bytes (headers / chunk framing)
        self.body = b""       # de-chunked SSE text not yet split into events
        self.headers_done = False
        self.chunk_left = 0   # bytes of the current chunk still to read (+2 for its CRLF)
        self.last_seq = after
        self.count = 0
        self.gaps = 0
        self.status = None
        self.closed = False

    def feed(self, data, now_us, read_us, lat, lat_read):
        self.raw += data
        if not self.headers_done:
            i = self.raw.find(b"\r\n\r\n")
            if i < 0:
                return
            head = self.raw[:i].decode("latin-1")
            self.status = int(head.split()[1])
            self.raw = self.raw[i + 4:]
            self.headers_done = True
        # De-chunk.
        raw = self.raw
        pos = 0
        out = []
        while True:
            if self.chunk_left > 0:
                take = min(self.chunk_left, len(raw) - pos)
                out.append(raw[pos:pos + take])
                pos += take
                self.chunk_left -= take
                if self.chunk_left > 0:
                    break
                continue
            j = raw.find(b"\r\n", pos)
            if j < 0:
                break
            line = raw[pos:j]
            if not line:           # the CRLF after a chunk's data
                pos = j + 2
                continue
            size = int(line.split(b";")[0], 16)
            pos = j + 2
            if size == 0:
                self.closed = True
                break
            self.chunk_left = size
        self.raw = raw[pos:]
        body = self.body + b"".join(out)
        # Events: "id: N\nevent: K\ndata: {...}\n\n"; comments (heartbeats) start with ':'.
        start = 0
        while True:
            k = body.find(b"\n\n", start)
            if k < 0:
                break
            block = body[start:k]
            start = k + 2
            if not block.startswith(b"id: "):
                continue
            nl = block.find(b"\n")
            seq = int(block[4:nl])
            a = block.find(b'"at":"')
            if a >= 0:
                at = at_us(block[a + 6:a + 33].decode())
                lat.append(now_us - at)
                lat_read.append(read_us - at)
            if seq != self.last_seq + 1:
                self.gaps += 1
            self.last_seq = seq
            self.count += 1
        self.body = body[start:]


def phase_sse(c, args, out):
    nodes = list(c.nodes.values())
    clients = [Client(n) for n in nodes]
    after = head_seq(clients[0])
    conns = []
    sel = selectors.DefaultSelector()
    for i in range(args.sse_clients):
        s = SseConn(nodes[i % len(nodes)], after)
        conns.append(s)
        sel.register(s.sock, selectors.EVENT_READ, s)
    lat, lat_read = [], []  # kernel arrival - at; client read - at (µs)
    stop = threading.Event()
    errors = []

    def reader():
        while not stop.is_set():
            for key, _ in sel.select(timeout=0.2):
                s = key.data
                try:
                    data, anc, _, _ = s.sock.recvmsg(262144, 64)
                except BlockingIOError:
                    continue
                except OSError as e:
                    errors.append(f"{s.node.node_id}: {e}")
                    sel.unregister(s.sock)
                    s.closed = True
                    continue
                read_us = int(time.time() * 1_000_000)
                if not data:
                    sel.unregister(s.sock)
                    s.closed = True
                    continue
                kernel_us = read_us
                for level, kind, d in anc:
                    if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and len(d) >= 16:
                        sec, nsec = struct.unpack("qq", d[:16])
                        kernel_us = sec * 1_000_000 + nsec // 1000
                s.feed(data, kernel_us, read_us, lat, lat_read)

    # Wait until every stream has its headers (sessions subscribed), then produce events.
    rt = threading.Thread(target=reader, daemon=True)
    rt.start()
    deadline = time.time() + 60
    while time.time() < deadline and not all(s.headers_done or s.closed for s in conns):
        time.sleep(0.05)  # until all 1,000 are subscribed, bounded
    bad = [s.status for s in conns if s.status != 200]
    assert not bad, f"{len(bad)} SSE connections not 200: {collections.Counter(bad)}"
    per_node = collections.Counter(s.node.node_id for s in conns)
    subs = {cl.node.node_id: cl.stats()["http"]["sse_subscribers"] for cl in clients}
    log(f"(b) {len(conns)} SSE clients connected ({dict(per_node)}; server sse_subscribers "
        f"{subs}) from seq {after}")
    f0 = finished_total(clients)
    ru0, t0, cpu0 = resource.getrusage(resource.RUSAGE_SELF), time.time(), cpu_sample(c)
    n_runs = int(args.sse_rate * args.sse_seconds)
    subm = [Client(n) for n in nodes]
    for i in range(n_runs):
        target = t0 + i / args.sse_rate
        d = target - time.time()
        if d > 0:
            time.sleep(d)  # pacing the submissions at the requested rate
        subm[i % len(subm)].submit(f"sse {i}")
    wait_finished(clients, f0 + n_runs, 120)
    end = head_seq(clients[0])
    deadline = time.time() + 60
    while time.time() < deadline and not all(s.last_seq >= end or s.closed for s in conns):
        time.sleep(0.05)  # until every client has the last event, bounded
    t1, ru1, cpu1 = time.time(), resource.getrusage(resource.RUSAGE_SELF), cpu_sample(c)
    stop.set()
    rt.join()
    for s in conns:
        s.sock.close()
    want = end - after
    counts = [s.count for s in conns]
    complete = sum(1 for s in conns if s.count == want and s.gaps == 0 and s.last_seq == end)
    busy = (ru1.ru_utime + ru1.ru_stime - ru0.ru_utime - ru0.ru_stime) / (t1 - t0)
    res = {"clients": len(conns), "runs": n_runs, "rate_runs_per_s": args.sse_rate,
           "events": want, "events_per_s": want / (t1 - t0), "deliveries": len(lat),
           "p50_ms": pct(lat, 0.50) / 1000, "p90_ms": pct(lat, 0.90) / 1000,
           "p99_ms": pct(lat, 0.99) / 1000, "max_ms": max(lat) / 1000 if lat else None,
           "read_p50_ms": pct(lat_read, 0.50) / 1000, "read_p99_ms": pct(lat_read, 0.99) / 1000,
           "min_events_per_client": min(counts), "max_events_per_client": max(counts),
           "clients_complete": complete, "clients_with_gaps": sum(1 for s in conns if s.gaps),
           "client_cpu_busy": busy, "server_cpu_busy": cpu_busy(cpu0, cpu1, t1 - t0),
           "errors": errors[:5], "load": load()}
    log(f"(b) {want} events ({res['events_per_s']:.0f}/s) x {len(conns)} clients: "
        f"{len(lat)} deliveries; commit-to-SSE p50 {res['p50_ms']:.2f} ms, p90 "
        f"{res['p90_ms']:.2f} ms, p99 {res['p99_ms']:.2f} ms, max {res['max_ms']:.1f} ms (kernel "
        f"receive time; when the client read it: p50 {res['read_p50_ms']:.2f} ms, p99 "
        f"{res['read_p99_ms']:.2f} ms); "
        f"events per client min {min(counts)} max {max(counts)} (want {want}); "
        f"{complete}/{len(conns)} clients got every event gap-free; client process "
        f"{busy * 100:.0f}% of a core; cores used: {res['server_cpu_busy']}; load {res['load']}")
    out["sse"] = res


# -- (c) failover ------------------------------------------------------------------------------

def all_runs(client):
    runs, cursor = [], ""
    while True:
        status, doc = client.call("GET", f"/v1/runs?limit=500&cursor={cursor}")
        assert status == 200, doc
        runs += doc["runs"]
        cursor = doc.get("next_cursor") or ""
        if not cursor:
            return runs


def phase_failover(args, out, rep):
    workdir = tempfile.mkdtemp(prefix="hbench-failover-", dir="/tmp")
    c = cluster_harness.Cluster(workdir, heartbeat_ms=args.heartbeat_ms,
                                lease_ttl_ms=args.lease_ttl_ms,
                                node_extra=sleep_script(args.fo_steps, args.fo_sleep_ms))
    try:
        c.start_all()
        nodes = list(c.nodes.values())
        clients = {n.node_id: Client(n) for n in nodes}
        victim = active_relay(list(clients.values())).node
        survivors = [n for n in nodes if n is not victim]
        ids = submit_many(nodes, args.fo_runs, threads=6, prefix="failover")
        a = clients[survivors[0].node_id]

        def mid_flight():
            runs = [r for r in all_runs(a) if r["node_id"] == victim.node_id]
            return sum(1 for r in runs if r["state"] == "running" and r["steps"] >= 2) >= 10
        deadline = time.time() + 60
        while not mid_flight():
            assert time.time() < deadline, "victim's runs never mid-flight"
            time.sleep(0.05)  # polling run states, bounded
        snap = all_runs(a)
        victim_runs = {r["id"] for r in snap if r["node_id"] == victim.node_id
                       and r["state"] not in ("succeeded", "failed", "cancelled")}
        in_flight = sum(1 for r in snap if r["state"] not in ("succeeded", "failed", "cancelled"))
        victim.kill9()
        killed = time.time()
        claimed = relay_at = None
        done = None
        deadline = killed + args.lease_ttl_ms / 1000 + 120
        while time.time() < deadline and (claimed is None or relay_at is None or done is None):
            now = time.time()
            runs = {r["id"]: r for r in all_runs(a)}
            if claimed is None and all(runs[r]["node_id"] != victim.node_id for r in victim_runs):
                claimed = now - killed
            if relay_at is None and any(clients[s.node_id].stats().get("relay", {}).get("active")
                                        for s in survivors):
                relay_at = now - killed
            if done is None and all(runs[r]["state"] in ("succeeded", "failed", "cancelled")
                                    for r in ids):
                done = now - killed
            time.sleep(0.02)  # polling, bounded by the deadline
        states = collections.Counter(r["state"] for r in all_runs(a))
        res = {"rep": rep, "victim": victim.node_id, "runs": len(ids), "in_flight": in_flight,
               "victim_runs": len(victim_runs), "claimed_s": claimed, "relay_s": relay_at,
               "all_finished_s": done, "states": dict(states),
               "remaining_work_s": args.fo_steps * args.fo_sleep_ms / 1000, "load": load()}
        log(f"(c) repeat {rep}: kill -9 {victim.node_id} (relay holder) with {in_flight} runs in "
            f"flight, {len(victim_runs)} its own; all its runs claimed after "
            f"{claimed if claimed is None else round(claimed, 2)} s, relay active on a survivor "
            f"after {relay_at if relay_at is None else round(relay_at, 2)} s, every run finished "
            f"after {done if done is None else round(done, 2)} s (lease {args.lease_ttl_ms} ms, "
            f"heartbeat {args.heartbeat_ms} ms; a run is {args.fo_steps} x "
            f"{args.fo_sleep_ms} ms); states {dict(states)}; load {res['load']}")
        out.setdefault("failover", []).append(res)
    finally:
        c.close()
    shutil.rmtree(workdir, ignore_errors=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sreh-bin", default=os.environ.get("SREH_BIN", "build/release/app/sreh"))
    p.add_argument("--phases", default="a,b,c")
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--relay-events", type=int, default=50000)
    p.add_argument("--submit-threads", type=int, default=8)
    p.add_argument("--sse-clients", type=int, default=1000)
    p.add_argument("--sse-rate", type=float, default=2.0, help="runs per second")
    p.add_argument("--sse-seconds", type=float, default=30)
    p.add_argument("--fo-runs", type=int, default=150)
    p.add_argument("--fo-steps", type=int, default=6)
    p.add_argument("--fo-sleep-ms", type=int, default=500)
    p.add_argument("--fo-repeats", type=int, default=3)
    p.add_argument("--heartbeat-ms", type=int, default=200)
    p.add_argument("--lease-ttl-ms", type=int, default=1500)
    args = p.parse_args()
    harness.SREH = os.path.abspath(args.sreh_bin)
    assert os.access(harness.SREH, os.X_OK), f"no sreh binary at {harness.SREH}"
    # 1,000 sockets here; the nodes inherit the limit too.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 65536)), hard))
    phases = set(args.phases.split(","))
    out = {"bench": "cluster", "nodes": 3, "cores": os.cpu_count(), "load_before": load()}
    log(f"# cluster bench: 3 nodes, {os.cpu_count()} cores, load {load()}")
    if phases & {"a", "b"}:
        workdir = tempfile.mkdtemp(prefix="hbench-cluster-", dir="/tmp")
        c = cluster_harness.Cluster(workdir, heartbeat_ms=args.heartbeat_ms,
                                    lease_ttl_ms=args.lease_ttl_ms,
                                    node_extra=echo_script(args.steps))
        try:
            c.start_all()
            log(f"# cluster up: PostgreSQL {c.pg.url}, NATS {c.nats.url}")
            if "b" in phases:
                phase_sse(c, args, out)
            if "a" in phases:
                phase_relay(c, args, out)
        finally:
            c.close()
        shutil.rmtree(workdir, ignore_errors=True)
    if "c" in phases:
        for rep in range(1, args.fo_repeats + 1):
            phase_failover(args, out, rep)
        fo = [r for r in out["failover"] if r["claimed_s"] is not None]
        if fo:
            log("(c) median over {} repeats: claimed {:.2f} s (range {:.2f}-{:.2f}), relay {:.2f} s, "
                "all finished {:.2f} s".format(
                    len(fo), statistics.median(r["claimed_s"] for r in fo),
                    min(r["claimed_s"] for r in fo), max(r["claimed_s"] for r in fo),
                    statistics.median(r["relay_s"] or float("nan") for r in fo),
                    statistics.median(r["all_finished_s"] or float("nan") for r in fo)))
    out["load_after"] = load()
    argv = " ".join(sys.argv[1:])
    log(f"reproduce: python3 bench/cluster_bench.py {argv}".rstrip())
    print(json.dumps(out))


if __name__ == "__main__":
    main()
