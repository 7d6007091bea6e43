"""Overload and slow clients (issue 15, point 3), against the real binary:

- 1,100 half-open connections (a partial request line each, from one address) with the header
  timeout out of the way: /healthz and authenticated API calls from another address still
  answer within 1 s; the flooded address may still ask /healthz and gets 503 with Retry-After
  for the API (its share, limits.max_connections_per_client, is taken).
- Without a per-client limit, the same flood from the caller's own address: the oldest
  incomplete connections are shed for the newcomers, so the API still answers.
- Every connection busy (SSE streams): a newcomer may ask /healthz, nothing else.
- A request header must arrive within limits.header_timeout_ms of its first byte; a keep-alive
  connection may idle longer between requests (limits.idle_timeout_ms).
- A store slower than the load: past limits.max_commit_backlog waiting commits, new runs get
  503 with Retry-After and create nothing; the runs taken go on when the store does.

Against the server before this change, the flood locks every client out (the 1,025th
connection is refused with 503, /healthz included) and a partial request line holds its
connection for 30 s."""

import http.client
import json
import os
import resource
import signal
import socket
import threading
import time

from cluster_harness import Postgres
from harness import TOKEN, Node, TempDir, run_tests, wait_until
from test_pg_restart import pg_processes

FLOOD = 1100


def raise_fd_limit(n):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < n:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, n), hard))


def call(port, method, path, source="127.0.0.1", token=TOKEN, timeout=1.0, body=None,
         headers=None):
    """One request on a fresh connection from `source`; (status, headers, body)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout,
                                      source_address=(source, 0))
    try:
        headers = dict(headers or {})
        if token:
            headers["Authorization"] = f"Bearer {token}"
        data = None
        if body is not None:
            data = json.dumps(body)
            headers["Content-Type"] = "application/json"
        conn.request(method, path, body=data, headers=headers)
        r = conn.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    finally:
        conn.close()


def flood(port, n, source="127.0.0.1"):
    """n connections that each send a partial request line and then nothing."""
    socks = []
    for _ in range(n):
        s = socket.socket()
        s.bind((source, 0))
        s.connect(("127.0.0.1", port))
        s.sendall(b"GET /v1/runs HTT")
        socks.append(s)
    return socks


def close_all(socks):
    for s in socks:
        s.close()


def stats(port, source):
    status, _, body = call(port, "GET", "/v1/stats", source=source, timeout=10)
    assert status == 200, body
    return json.loads(body)["http"]


def front_reached(port, source, key, at_least):
    """For wait_until: the front's counter `key` has reached `at_least` (False while the
    server is still taking the flood in and a probe times out)."""
    try:
        return stats(port, source)[key] >= at_least
    except TimeoutError:
        print("a stats probe took over 10 s while the flood was taken in")
        return False


def timed(fn):
    t0 = time.monotonic()
    out = fn()
    return out, time.monotonic() - t0


def test_a_flood_of_half_open_connections_locks_nobody_out():
    raise_fd_limit(FLOOD + 256)
    with TempDir() as d:
        node = Node(d, config_extra="limits:\n  header_timeout_ms: 600000\n").start()
        socks = flood(node.port, FLOOD)
        try:
            # Every flood connection accepted (the count includes the probe's own).
            wait_until(lambda: front_reached(node.port, "127.0.0.2", "limited", FLOOD - 256), 60,
                       "the flood to be accepted")
            for _ in range(5):
                (status, _, _), took = timed(lambda: call(node.port, "GET", "/healthz",
                                                          source="127.0.0.2"))
                assert status == 200 and took < 1.0, (status, took)
                (status, _, body), took = timed(lambda: call(node.port, "GET", "/v1/runs",
                                                             source="127.0.0.2"))
                assert status == 200 and took < 1.0, (status, took, body)
            # The flooded address: health yes, the API no (its share is taken), told when.
            status, _, _ = call(node.port, "GET", "/healthz")
            assert status == 200
            status, headers, body = call(node.port, "GET", "/v1/runs")
            assert status == 503 and headers.get("retry-after") == "1", (status, headers)
            assert b"too many connections from 127.0.0.1 (limit 256 per client)" in body, body
            h = stats(node.port, "127.0.0.2")
            print(f"flood of {FLOOD}: {h}")
            assert h["connections"] <= 1024 + 1, h  # at the limit: newcomers shed the oldest
            assert h["shed"] >= FLOOD - 1024, h
        finally:
            close_all(socks)
        node.stop()


def test_without_a_per_client_limit_the_oldest_incomplete_connections_are_shed():
    with TempDir() as d:
        node = Node(d, config_extra=("limits:\n  max_connections: 100\n"
                                     "  max_connections_per_client: 0\n"
                                     "  header_timeout_ms: 600000\n")).start()
        first = flood(node.port, 100)
        later = flood(node.port, 50)
        try:
            wait_until(lambda: front_reached(node.port, "127.0.0.1", "shed", 50), 60,
                       "the oldest connections to be shed")
            for _ in range(5):
                (status, _, body), took = timed(lambda: call(node.port, "GET", "/v1/runs"))
                assert status == 200 and took < 1.0, (status, took, body)
            # The first connections went (the server closed them), the later ones stay open.
            for s in first[:40]:
                s.settimeout(5)
                assert s.recv(1) == b"", "a shed connection stays open"
            for s in later:
                s.setblocking(False)
                try:
                    assert s.recv(1) != b"", "a newer connection was shed before an older one"
                except BlockingIOError:
                    pass  # open, nothing to read: as it should be
        finally:
            close_all(first + later)
        node.stop()


def test_when_every_connection_is_busy_a_newcomer_may_ask_only_for_health():
    with TempDir() as d:
        node = Node(d, config_extra="limits:\n  max_connections: 4\n").start()
        streams = []
        try:
            for _ in range(4):  # SSE streams are busy: never shed
                s = socket.create_connection(("127.0.0.1", node.port))
                s.sendall(f"GET /v1/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}"
                          f"\r\nAccept: text/event-stream\r\n\r\n".encode())
                s.settimeout(5)
                assert s.recv(64).startswith(b"HTTP/1.1 200"), "the stream did not start"
                streams.append(s)
            status, _, _ = call(node.port, "GET", "/healthz")
            assert status == 200
            status, _, _ = call(node.port, "GET", "/readyz")
            assert status == 200
            # Until the server has seen the earlier probes' connections close, a newcomer may
            # shed one of them; then it is limited to health.
            status, headers, body = wait_until(
                lambda: (lambda r: r if r[0] == 503 else None)(call(node.port, "GET", "/v1/runs")),
                10, "a newcomer limited to /healthz and /readyz")
            assert headers.get("retry-after") == "1", headers
            assert b"all of them busy" in body, body
            status, _, body = call(node.port, "POST", "/v1/goals", body={"goal": "x" * 50000})
            assert status == 503 and b"all of them busy" in body, (status, body)  # before the body
        finally:
            close_all(streams)
        node.stop()


def test_a_full_address_sheds_only_its_own_connections():
    with TempDir() as d:
        node = Node(d, config_extra=("limits:\n  max_connections: 10\n"
                                     "  max_connections_per_client: 5\n"
                                     "  header_timeout_ms: 600000\n")).start()
        # Another client's keep-alive connection, idle and older than anything that follows.
        keep = http.client.HTTPConnection("127.0.0.1", node.port, timeout=5,
                                          source_address=("127.0.0.2", 0))
        keep.request("GET", "/healthz")
        r = keep.getresponse()
        assert r.status == 200
        r.read()
        socks = flood(node.port, 20)
        try:
            # 20 from one address over a limit of 10: its own oldest connections are shed
            # (no probe from elsewhere: a newcomer from another address would rightly shed
            # the oldest idle connection, the one under test).
            for s in socks[:10]:
                s.settimeout(10)
                assert s.recv(1) == b"", "the flood's own oldest connection was not shed"
            keep.request("GET", "/v1/runs", headers={"Authorization": f"Bearer {TOKEN}"})
            r = keep.getresponse()
            assert r.status == 200, "the other client's idle keep-alive connection was shed"
            r.read()
        finally:
            keep.close()
            close_all(socks)
        node.stop()


def test_a_header_must_arrive_in_time_but_keep_alive_may_idle():
    with TempDir() as d:
        node = Node(d, config_extra=("limits:\n  header_timeout_ms: 300\n"
                                     "  idle_timeout_ms: 60000\n")).start()
        # A partial request line: cut after the header timeout.
        s = socket.create_connection(("127.0.0.1", node.port))
        s.sendall(b"GET /healthz HTT")
        s.settimeout(10)
        t0 = time.monotonic()
        assert s.recv(1) == b"", "an incomplete header kept its connection"
        took = time.monotonic() - t0
        assert 0.25 <= took < 5, took
        s.close()
        # A keep-alive connection idle for longer than the header timeout between requests.
        conn = http.client.HTTPConnection("127.0.0.1", node.port, timeout=5)
        conn.request("GET", "/healthz")
        r = conn.getresponse()
        assert r.status == 200
        r.read()
        time.sleep(0.6)  # the client's think time, longer than header_timeout_ms: the behaviour
        conn.request("GET", "/v1/runs", headers={"Authorization": f"Bearer {TOKEN}"})
        r = conn.getresponse()
        assert r.status == 200, r.status
        r.read()
        conn.close()
        h = stats(node.port, "127.0.0.1")
        assert h["header_timeouts"] >= 1, h
        node.stop()


def test_new_runs_wait_outside_when_the_store_falls_behind():
    with TempDir() as d:
        pg = Postgres("backlog").start()
        try:
            node = Node(d, config_extra=(f"store:\n  kind: postgres\n  url: {pg.url}\n"
                                         "limits:\n  max_commit_backlog: 2\n"
                                         "  handler_threads: 32\n")).start()
            pids = pg_processes(pg)
            for p in pids:
                os.kill(p, signal.SIGSTOP)
            results, threads = [], []
            try:
                def submit(i):
                    results.append(call(node.port, "POST", "/v1/goals", timeout=60,
                                        body={"goal": f"run {i} against a frozen store"},
                                        headers={"Idempotency-Key": f"frozen-{i}"}))
                for i in range(12):
                    t = threading.Thread(target=submit, args=(i,), daemon=True)
                    t.start()
                    threads.append(t)
                refused = wait_until(lambda: [r for r in results if r[0] == 503], 20,
                                     "a submit to be refused while the store is frozen")
                status, headers, body = refused[0]
                assert headers.get("retry-after") == "1", headers
                assert b"overloaded" in body and b"max_commit_backlog 2" in body, body
                assert call(node.port, "GET", "/healthz")[0] == 200
            finally:
                for p in pids:
                    os.kill(p, signal.SIGCONT)
            for t in threads:
                t.join(60)
            codes = sorted(r[0] for r in results)
            print(f"12 submits against a frozen store: {codes}")
            created = [json.loads(r[2])["run"]["id"] for r in results if r[0] in (200, 201)]
            assert created and len(created) + codes.count(503) == 12, codes
            # The refused submits created nothing: the runs are exactly the accepted ones.
            status, _, doc = node.json("GET", "/v1/runs?limit=100")
            assert status == 200
            assert sorted(r["id"] for r in doc["runs"]) == sorted(created), doc
            for r in created:
                node.wait_run(r, timeout=60)
            node.stop()
        finally:
            pg.close()


if __name__ == "__main__":
    run_tests([
        test_a_flood_of_half_open_connections_locks_nobody_out,
        test_without_a_per_client_limit_the_oldest_incomplete_connections_are_shed,
        test_when_every_connection_is_busy_a_newcomer_may_ask_only_for_health,
        test_a_full_address_sheds_only_its_own_connections,
        test_a_header_must_arrive_in_time_but_keep_alive_may_idle,
        test_new_runs_wait_outside_when_the_store_falls_behind,
    ])
