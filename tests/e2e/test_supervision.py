"""The HTTP front and the relay are children of the node's supervision tree: the real binary,
with SREH_FAULT making the front's io loop throw (at its 8th request) and the relay thread die
(after it published its 2nd page, before it stored the offset). The supervisor restarts both:
the API answers again on the same port, /v1/actors shows one restart of each, and JetStream
holds every event of the log exactly once, in seq order. Own NATS server (scripts/nats.sh).
"""

import collections
import json
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from cluster_harness import Nats  # noqa: E402
from harness import Node, TempDir, run_tests, wait_until  # noqa: E402
from nats_stream import stream_messages  # noqa: E402

PLAN = """model:
  provider: scripted
  script:
    - {tool: test.echo, args: {service: checkout}}
    - {tool: test.echo, args: {service: payments}}
"""
NODE = NATS = None


def actors():
    """{name: row} of GET /v1/actors (an OSError or a broken connection while the front is down
    propagates: callers poll)."""
    status, _, doc = NODE.json("GET", "/v1/actors")
    assert status == 200, f"/v1/actors: {status} {doc}"
    return {a["name"]: a for a in doc["actors"]}


def actors_or_none():
    try:
        return actors()
    except (OSError, ValueError):  # the front is between two incarnations
        return None


def restarted(name):
    a = actors_or_none()
    return a if a and a[name]["restarts"] >= 1 and a[name]["state"] == "running" else None


def test_the_tree_lists_the_kernel_relay_evaluator_and_front():
    a = wait_until(actors_or_none, 10, "/v1/actors")
    assert list(a) == ["kernel", "orchestrator", "relay", "evolve", "http_front"], \
        f"children: {list(a)}"
    assert a["kernel"]["parent"] == "node" and a["orchestrator"]["parent"] == "node"
    assert all(a[c]["parent"] == "services" for c in ("relay", "evolve", "http_front")), a


def test_a_front_whose_io_loop_throws_is_restarted_on_the_same_port():
    # Every request counts toward the 8th; some of them may be refused while the front restarts.
    a = wait_until(lambda: restarted("http_front"), 30, "the front to be restarted")
    assert a["http_front"]["restarts"] == 1, a["http_front"]
    assert a["http_front"]["last_error"] == "the io loop threw: fault injected at http.io"
    status, _, _ = NODE.request("GET", "/readyz")
    assert status == 200, "the node is not ready after the front's restart"


def test_a_relay_thread_that_dies_is_restarted_and_every_event_reaches_jetstream():
    runs = [NODE.submit(f"supervised run {i}") for i in range(3)]
    for r in runs:
        NODE.wait_run(r, states=("succeeded",))
    a = wait_until(lambda: restarted("relay"), 30, "the relay to be restarted")
    assert a["relay"]["restarts"] == 1, a["relay"]
    assert a["relay"]["last_error"] == "the relay thread died: fault injected at relay.round"
    runs.append(NODE.submit("after the relay's restart"))
    NODE.wait_run(runs[-1], states=("succeeded",))
    last = NODE.stats()["store"]["last_event_seq"]
    wait_until(lambda: NODE.stats()["relay"]["offset"] == last, 30, "the relay to catch up")
    assert NODE.stats()["relay"]["duplicates"] > 0, "the dead thread's page was not sent again"
    msgs = stream_messages(NATS.url, "sreh-events")
    ids = collections.Counter(m["headers"].get("Nats-Msg-Id") for m in msgs)
    assert all(n == 1 for n in ids.values()), "an event is in JetStream twice"
    seqs = [json.loads(m["data"])["seq"] for m in msgs]
    assert seqs == list(range(1, last + 1)), \
        f"JetStream seqs {seqs[:5]}..{seqs[-5:]}, log 1..{last}"


if __name__ == "__main__":
    code = 1
    with TempDir() as d:
        NATS = Nats("supervision").start()
        try:
            NODE = Node(d, PLAN + f"nats:\n  url: {NATS.url}\n",
                        env_extra={"SREH_FAULT": "http.io:8,relay.round:2"}).start()
            try:
                run_tests([
                    test_the_tree_lists_the_kernel_relay_evaluator_and_front,
                    test_a_front_whose_io_loop_throws_is_restarted_on_the_same_port,
                    test_a_relay_thread_that_dies_is_restarted_and_every_event_reaches_jetstream,
                ])
            except SystemExit as e:
                code = e.code
            NODE.stop()
            assert NODE.proc.returncode == 0, f"sreh exited {NODE.proc.returncode}"
        finally:
            NATS.close()
    sys.exit(code)
