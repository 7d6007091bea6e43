"""The store freezes while runs are in flight: PostgreSQL is stopped with SIGSTOP, so every read
and commit waits (no error, no timeout) until it continues. Store calls of the actors run on the
node's store pool, never on CAF's two scheduler threads, so meanwhile the actors keep going
where they need no store: while a cancel of a parked run (the kernel reads the store for it)
and every run's policy check of its next action (rate limits: a store read) wait, the runs
whose sleeping tool step ends record the end at once (their next commit then waits), a cancel
reaches the tool of a sleeping run and stops it, and /healthz and the kernel's figures answer.
When the store continues, every run completes and each side effect happened once.

Against the kernel that read the store on the scheduler (the code before the store pool), the
parked cancel and the first policy check hold both scheduler threads until the store continues:
the other runs' tool ends are handled only then, and the test fails naming those runs."""

import collections
import datetime
import os
import signal
import threading
import time

from cluster_harness import Postgres
from harness import Node, TempDir, run_tests, wait_until
from test_pg_restart import pg_processes

RUNS = 6          # sleeping runs; one of them is cancelled during the freeze
SLEEP_MS = 3000   # their first step: long enough to stop the database while they sleep
FREEZE_S = 6.0    # from SIGSTOP to SIGCONT: the sleeps end about half-way
POLICY = """mode: autonomous
rules:
  - id: hold-for-approval
    when: {tools: [test.record], labels: {hold: "yes"}}
    effect: require_approval
    approval: {approvers: 1, roles: [approver], timeout: 1h}
  - id: record-rate
    when: {tools: [test.record], rate_limit: {max: 1000, per: 1h, by: tool}}
    effect: deny
    reason: a rate limit high enough never to bite; every check of test.record reads the store
"""


def config(pg_url):
    return (f"store:\n  kind: postgres\n  url: {pg_url}\n"
            "policy_mode: autonomous\npolicy_file: policy.yaml\n"
            "model:\n  provider: scripted\n  script:\n"
            f"    - {{tool: test.sleep, args: {{ms: {SLEEP_MS}}}}}\n"
            "    - {tool: test.record, args: {action: restart}}\n"
            "    - {tool: test.sleep, args: {ms: 50}}\n"
            "limits:\n  tool_threads: 16\n")


def parse_ts(text):
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def submit(node, goal, labels=None):
    body = {"goal": goal}
    if labels:
        body["labels"] = labels
    status, _, doc = node.json("POST", "/v1/goals", body)
    assert status in (200, 201), f"submit: {status} {doc}"
    return doc["run"]["id"]


def in_background(fn):
    """Runs fn() on a thread (its HTTP request waits for the store); returns a getter."""
    out = {}

    def body():
        try:
            out["value"] = fn()
        except Exception as e:  # noqa: BLE001 - reported by the getter
            out["error"] = e
    t = threading.Thread(target=body, daemon=True)
    t.start()

    def get(timeout=30):
        t.join(timeout)
        assert not t.is_alive(), "the request did not end"
        if "error" in out:
            raise out["error"]
        return out["value"]
    return get


def test_actors_keep_going_while_the_store_is_frozen():
    with TempDir() as d:
        pg = Postgres("freeze").start()
        try:
            with open(os.path.join(d, "policy.yaml"), "w") as f:
                f.write(POLICY)
            node = Node(d, config_extra=config(pg.url)).start()
            # A run parked on an approval (its sleep first), then the sleeping runs.
            parked = submit(node, "parks on an approval", {"hold": "yes"})
            wait_until(lambda: node.run(parked)["state"] == "waiting", 20, "the run to park")
            ids = [submit(node, f"sleeps through the freeze {i}") for i in range(RUNS)]
            wait_until(lambda: all(node.run(r)["steps"] >= 1 for r in ids), 10,
                       "every run's sleep to start")
            pids = pg_processes(pg)
            for p in pids:
                os.kill(p, signal.SIGSTOP)
            frozen = time.time()
            try:
                # The kernel reads the store to cancel a parked run: in flight until SIGCONT.
                cancel_parked = in_background(lambda: node.json(
                    "POST", f"/v1/runs/{parked}/cancel", {}))
                # A cancel of a sleeping run: the kernel hands it to the run, whose tool stops.
                cancel_sleeping = in_background(lambda: node.json(
                    "POST", f"/v1/runs/{ids[0]}/cancel", {}))
                cancelled_at = time.time()
                # The HTTP API answers what needs no store.
                for _ in range(3):
                    assert node.request("GET", "/healthz", timeout=5)[0] == 200
                    status, _, nodes = node.json("GET", "/v1/cluster/nodes")
                    assert status == 200, nodes
                    assert nodes["nodes"][0]["active_runs"] >= RUNS - 1, nodes
                time.sleep(max(0.0, FREEZE_S - (time.time() - frozen)))  # the freeze itself
            finally:
                thawed = time.time()
                for p in pids:
                    os.kill(p, signal.SIGCONT)
            print(f"store frozen for {thawed - frozen:.1f} s; the sleeps ended about "
                  f"{SLEEP_MS / 1000:.1f} s into it")

            for get in (cancel_parked, cancel_sleeping):
                status, _, doc = get()
                assert status == 200 and doc["run"]["state"] == "cancelled", (status, doc)
            for r in ids:
                node.wait_run(r, timeout=60)
            states = collections.Counter(node.run(r)["state"] for r in ids)
            assert states == {"succeeded": RUNS - 1, "cancelled": 1}, states

            # When each run's actor handled the end of its sleep: stamped by the actor itself.
            late = []
            for r in ids:
                first = node.steps(r)[0]
                ended = parse_ts(first["finished_at"]) - frozen
                print(f"  {r}: sleep ended {ended:+.2f} s into the freeze ({first['state']})")
                if parse_ts(first["finished_at"]) >= thawed:
                    late.append(f"{r} at {ended:+.2f} s")
            assert not late, ("runs whose actors could not handle their tool's end while the "
                              f"store was frozen ({thawed - frozen:.1f} s): {late}")
            first = node.steps(ids[0])[0]
            assert first["state"] == "failed" and "cancelled" in (first["error"] or ""), first
            stopped = parse_ts(first["finished_at"]) - cancelled_at
            assert stopped < SLEEP_MS / 2000, \
                f"the cancelled sleep ended {stopped:.2f} s after the cancel"

            with open(node.record) as f:
                keys = [line.strip() for line in f if line.strip()]
            assert sorted(keys) == sorted(f"{r}:2" for r in ids[1:]), keys
            node.stop()  # and the node logged no blocking call on a scheduler thread
        finally:
            pg.close()


if __name__ == "__main__":
    run_tests([test_actors_keep_going_while_the_store_is_frozen])
