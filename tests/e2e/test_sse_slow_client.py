"""A client that stops reading an SSE stream is cut; it never stalls the writer or the other
clients. A fast firehose client sees every event of a burst, gap-free, while a slow client that
never reads sits on the same node; a client that stalls while catching up on the log is cut too."""

import os
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
from harness import TOKEN, Node, TempDir, run_tests, sse_events, wait_until  # noqa: E402

STEPS = 40
RUNS = 150
PLAN = "limits: {sse_queue_events: 200}\nmodel:\n  provider: scripted\n  script:\n" + \
       "".join(f"    - {{tool: test.echo, args: {{i: {i}}}}}\n" for i in range(STEPS))


def test_slow_client_is_cut_and_others_see_everything():
    with TempDir() as d:
        node = Node(d, PLAN).start()
        slow = socket.socket()
        slow.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        slow.connect(("127.0.0.1", node.port))
        slow.sendall(b"GET /v1/events HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n"
                     b"Authorization: Bearer " + TOKEN.encode() + b"\r\n\r\n")

        seen, done = [], threading.Event()
        succeeded = set()

        def fast_reader():
            for eid, kind, data in sse_events(node.port, "/v1/events", last_event_id=0,
                                              timeout=120):
                seen.append(int(eid))
                if kind == "run.succeeded":
                    succeeded.add(eid)
                    if len(succeeded) == RUNS:
                        break
            done.set()

        t = threading.Thread(target=fast_reader, daemon=True)
        t.start()
        deadline = time.time() + 10  # both streams are live before the burst starts
        while node.stats()["http"]["sse_subscribers"] < 2:
            assert time.time() < deadline, "the two SSE clients never subscribed"
        for i in range(RUNS):
            node.submit(f"burst {i}")
        assert done.wait(120), f"fast client saw only {len(succeeded)} of {RUNS} runs end"
        assert seen == list(range(1, len(seen) + 1)), "fast client missed events"
        assert len(seen) >= RUNS * (2 * STEPS + 4), f"fast client saw only {len(seen)} events"

        # The slow client was cut: its socket reaches EOF though it read far less than the burst.
        slow.settimeout(20)
        received = 0
        deadline = time.time() + 20
        while time.time() < deadline:
            chunk = slow.recv(65536)
            if not chunk:
                break
            received += len(chunk)
        else:
            raise AssertionError("slow client was never cut")
        slow.close()
        assert "client too slow" in node.log_text(), node.log_text()

        # A client that asks for the whole log (12,601 events) and never reads stalls in its
        # catch-up, where live events are dropped rather than queued: its stalled write cuts it.
        stalled = socket.socket()
        stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        stalled.connect(("127.0.0.1", node.port))
        stalled.sendall(b"GET /v1/events HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n"
                        b"Last-Event-ID: 0\r\nAuthorization: Bearer " + TOKEN.encode() +
                        b"\r\n\r\n")
        wait_until(lambda: "a write waited" in node.log_text(), 40,
                   "the stalled catch-up to be cut")
        stalled.close()
        status, _, _ = node.request("GET", "/healthz")
        assert status == 200
        node.stop()


if __name__ == "__main__":
    run_tests([test_slow_client_is_cut_and_others_see_everything])
