"""A three-node cluster on loopback (own PostgreSQL and NATS JetStream): runs are placed across
the nodes, one node is killed with SIGKILL while 200 runs are in flight, and the survivors claim
its runs and finish them. Checked: every run succeeds; no side effect (test.record, counted by
idempotency key in a shared file) happens twice; JetStream holds every event exactly once with
gap-free per-run sequences; an SSE client on a survivor saw every event of every run; a client
of the dead node resumes on a survivor with Last-Event-ID without loss or duplicates. Also:
GET /v1/cluster/nodes, decisions routed to the owner, and the relay moving to a survivor.
"""

import collections
import json
import threading
import time

from cluster_harness import Cluster
from harness import TempDir, run_tests, wait_until, sse_events
from nats_stream import stream_messages

RUNS = 200
SCRIPT = """model:
  provider: scripted
  script:
    - {tool: test.sleep, args: {ms: 12000}}
    - {tool: test.record, args: {action: drain}}
    - {tool: test.sleep, args: {ms: 1500}}
    - {tool: test.record, args: {action: restart}}
    - {tool: test.sleep, args: {ms: 1500}}
    - {tool: test.record, args: {action: scale}}
limits:
  tool_threads: 128
"""


class SseCollector(threading.Thread):
    """Follows /v1/events on one node; keeps (seq, event) in arrival order."""

    def __init__(self, node, last_event_id=None):
        super().__init__(daemon=True)
        self.node, self.last_event_id = node, last_event_id
        self.events, self.error, self.ended = [], None, threading.Event()

    def run(self):
        try:
            for eid, kind, data in sse_events(self.node.port, "/v1/events",
                                              last_event_id=self.last_event_id, timeout=300):
                self.events.append((int(eid), json.loads(data)))
        except Exception as e:  # noqa: BLE001 - a cut stream is expected for the victim
            self.error = e
        finally:
            self.ended.set()


def all_runs(node):
    runs, cursor = [], ""
    while True:
        status, _, doc = node.json("GET", f"/v1/runs?limit=500&cursor={cursor}")
        assert status == 200, doc
        runs += doc["runs"]
        cursor = doc.get("next_cursor") or ""
        if not cursor:
            return runs


def run_events(node, run_id):
    """The run's events from the store (catch-up of its SSE stream, which ends with the run)."""
    return [json.loads(d) for _, _, d in sse_events(node.port, f"/v1/runs/{run_id}/events",
                                                     timeout=60)]


def test_kill9_one_node_with_200_runs_in_flight():
    with TempDir() as d:
        c = Cluster(d, node_extra=SCRIPT).start_all()
        doc = c.nodes["node-a"].cluster_nodes()
        assert doc["clustered"] and doc["self"] == "node-a", doc
        assert [n["id"] for n in doc["nodes"]] == ["node-a", "node-b", "node-c"], doc
        # The victim is the node whose relay is the active one: the relay moves too.
        def relay_holders(nodes):
            held = [n for n in nodes if n.stats()["relay"]["active"]]
            return held if len(held) == 1 else None
        victim = wait_until(lambda: relay_holders(c.nodes.values()), 10,
                            "exactly one active relay")[0]
        a, b = [n for n in c.nodes.values() if n is not victim]
        dead = victim.node_id
        print(f"victim: {dead} (holds the relay lock)")
        survivor_sse = SseCollector(b)
        victim_sse = SseCollector(victim)
        survivor_sse.start()
        victim_sse.start()

        # Submitted to every node in turn; each places it on the least-loaded node.
        ids, submit_started = [], time.time()
        for i in range(RUNS):
            node = (a, b, victim)[i % 3]
            ids.append(node.submit(f"cluster run {i}", key=f"cluster-{i}"))
        assert len(set(ids)) == RUNS
        print(f"submitted {RUNS} runs in {time.time() - submit_started:.2f}s")
        # One listing, not a GET per run: the runs are to be still in flight at the kill.
        placed = {r["id"]: r["node_id"] for r in all_runs(a)}
        owners = collections.Counter(placed[r] for r in ids)
        print(f"placement: {dict(owners)}")
        assert set(owners) == {"node-a", "node-b", "node-c"}, owners
        assert min(owners.values()) >= RUNS // 6, f"placement is lopsided: {owners}"

        # Kill the victim while its runs are mid-flight (some recorded a side effect already).
        # The first step (12 s) outlasts submitting all 200 (8 s on a loaded 2-core machine),
        # so no run has ended when the first ones have recorded their first side effect.
        def victim_busy():
            runs = [r for r in all_runs(a) if r["node_id"] == dead]
            return sum(1 for r in runs if r["state"] == "running" and r["steps"] >= 2) >= 10
        wait_until(victim_busy, 30, "the victim's runs to be mid-flight")
        snapshot = all_runs(a)
        in_flight = [r for r in snapshot if r["state"] not in ("succeeded", "failed", "cancelled")]
        victim_runs = {r["id"] for r in in_flight if r["node_id"] == dead}
        victim.kill9()
        killed_at = time.time()
        victim_sse.ended.wait(10)
        last_seen = victim_sse.events[-1][0] if victim_sse.events else 0

        # The dead node's client moves to a survivor and resumes where it was.
        moved_sse = SseCollector(a, last_event_id=last_seen)
        moved_sse.start()

        def adopted():
            return all(a.run(r)["node_id"] in (a.node_id, b.node_id) for r in victim_runs)
        wait_until(adopted, c.lease_ttl_ms / 1000 + 15, f"the survivors to claim {dead}'s runs")
        claimed_after = time.time() - killed_at

        def finished():
            runs = {r["id"]: r for r in all_runs(a)}
            return all(runs[r]["state"] in ("succeeded", "failed", "cancelled") for r in ids)
        wait_until(finished, c.lease_ttl_ms / 1000 + 60, "every run to finish")
        finished_after = time.time() - killed_at
        print(f"at kill -9: {len(in_flight)} runs in flight, {len(victim_runs)} on {dead}")
        assert len(in_flight) >= RUNS * 3 // 4, f"only {len(in_flight)} runs in flight at the kill"
        print(f"failover: {len(victim_runs)} runs of {dead} claimed {claimed_after:.2f}s after "
              f"kill -9 (lease {c.lease_ttl_ms} ms); all {RUNS} runs finished after "
              f"{finished_after:.2f}s")
        runs = {r["id"]: r for r in all_runs(a)}
        bad = {r: runs[r]["state"] for r in ids if runs[r]["state"] != "succeeded"}
        assert not bad, f"runs not succeeded: {bad}"

        # No side effect twice, none missing: 3 records per run, each key once.
        with open(c.record) as f:
            keys = [line.strip() for line in f if line.strip()]
        dup = [k for k, n in collections.Counter(keys).items() if n > 1]
        assert not dup, f"side effects executed twice: {dup[:5]}"
        assert len(keys) == 3 * RUNS, f"{len(keys)} side effects, expected {3 * RUNS}"

        # The store's event log is the reference: per run, run_seq 1..N.
        store_events = {}
        for r in ids:
            evs = run_events(a, r)
            seqs = [e["run_seq"] for e in evs]
            assert seqs == list(range(1, len(seqs) + 1)), f"{r}: run_seq {seqs}"
            assert evs[-1]["kind"] == "run.succeeded", f"{r}: last event {evs[-1]}"
            store_events[r] = evs
        # Each claimed run says once which survivor resumed it: the one that owns it now.
        for r in victim_runs:
            rec = [e for e in store_events[r] if e["kind"] == "run.recovered"]
            assert len(rec) == 1, f"claimed run {r} has {len(rec)} run.recovered events"
            assert rec[0]["data"]["node"] == runs[r]["node_id"] != dead, (rec[0], runs[r])
        last_seq = max(e["seq"] for evs in store_events.values() for e in evs)

        # JetStream: every event exactly once, per-run sequences gap-free.
        def relayed():
            msgs = stream_messages(c.nats.url, "sreh-events")
            got = {json.loads(m["data"])["seq"] for m in msgs}
            return msgs if last_seq in got else None
        msgs = wait_until(relayed, 30, "the relay to publish every event")
        ids_seen = collections.Counter(m["headers"].get("Nats-Msg-Id") for m in msgs)
        assert all(n == 1 for n in ids_seen.values()), "an event is in JetStream twice"
        js = collections.defaultdict(list)
        for m in msgs:
            e = json.loads(m["data"])
            js[e["run_id"]].append(e["run_seq"])
        for r in ids:
            assert js[r] == [e["run_seq"] for e in store_events[r]], \
                f"{r}: JetStream has run_seq {js[r]}"

        # SSE on a survivor: every event of every run, in order, once.
        def sse_caught_up(col):
            return col.events and col.events[-1][0] >= last_seq
        wait_until(lambda: sse_caught_up(survivor_sse), 30, "the survivor's SSE client to catch up")
        check_sse(survivor_sse.events, ids, store_events, b.node_id)
        # The dead node's client, resumed on node-a: no gap, no duplicate across the move.
        wait_until(lambda: sse_caught_up(moved_sse), 30, "the moved SSE client to catch up")
        combined = victim_sse.events + moved_sse.events
        check_sse(combined, ids, store_events, f"{dead} then {a.node_id}")
        seqs = [s for s, _ in combined]
        assert seqs == sorted(set(seqs)), "the moved client got a duplicate or reordering"
        print(f"SSE: {b.node_id} client {len(survivor_sse.events)} events; moved client "
              f"{len(victim_sse.events)} on {dead} + {len(moved_sse.events)} on {a.node_id} "
              f"(resumed after seq {last_seen})")

        # The membership view shows the victim dead, its runs gone to the survivors; one of them
        # took over the relay.
        view = {n["id"]: n for n in b.cluster_nodes()["nodes"]}
        assert view[dead]["state"] == "dead" and not view[dead]["connected"], view
        assert view[dead]["owned_runs"] == view[dead]["active_runs"] == 0, view[dead]
        assert view[dead]["parked_runs"] == 0, view[dead]
        assert relay_holders([a, b]), "no survivor took over the relay"
        c.close()


def check_sse(events, ids, store_events, where):
    per_run = collections.defaultdict(list)
    for _, e in events:
        per_run[e["run_id"]].append(e["run_seq"])
    for r in ids:
        want = [e["run_seq"] for e in store_events[r]]
        assert per_run[r] == want, f"SSE on {where}, run {r}: {per_run[r]} != {want}"


if __name__ == "__main__":
    run_tests([test_kill9_one_node_with_200_runs_in_flight])
