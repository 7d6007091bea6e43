"""Cluster behaviour around requests and membership, over HTTP with real tokens:
- decisions and cancels sent to a node that does not own the run reach the owner;
- a run parked on an approval moves to the survivor when its node is killed, and is approved
  there;
- a node whose peers are not running says so (/v1/cluster/nodes, its log, `sreh cluster check`)
  and runs goals itself;
- a worker-only node runs the goals placed on it but answers API requests with 503 and why;
- broken topology files are refused by `sreh config check` and `sreh serve` with the reason.
"""

import json
import os
import subprocess
import time

import harness
from cluster_harness import Cluster
from harness import TempDir, auth_block, run_tests, sse_events, wait_until

TOKENS = {"otto": ("operator", "otto-cluster-token"), "alice": ("approver", "alice-cluster-tok")}
OTTO, ALICE = TOKENS["otto"][1], TOKENS["alice"][1]
REVIEW = """policy_mode: review
model:
  provider: scripted
  script:
    - {tool: test.record, args: {action: restart}}
"""


def review_pair(d):
    """Two nodes in review mode with otto's and alice's tokens: the cluster and its nodes."""
    c = Cluster(d, names=("node-a", "node-b"), node_extra=REVIEW, auth=auth_block(TOKENS),
                token=OTTO).start_all()
    return c, c.nodes["node-a"], c.nodes["node-b"]


def pending_approval(node, run_id):
    def find():
        status, _, doc = node.json("GET", f"/v1/approvals?state=pending&run={run_id}")
        assert status == 200, doc
        return doc["approvals"][0]["id"] if doc["approvals"] else None
    return wait_until(find, 20, f"an approval for {run_id}")


def decide(node, approval_id, decision="approve"):
    status, _, doc = node.json("POST", f"/v1/approvals/{approval_id}/decision",
                               {"decision": decision, "comment": "from another node"},
                               token=ALICE)
    assert status == 200, f"decision via {node.node_id}: {status} {doc}"
    return doc


def wait_state(node, run_id, state, timeout=20):
    return wait_until(lambda: node.run(run_id)["state"] == state, timeout,
                      f"run {run_id} to be {state} (is {node.run(run_id)['state']})")


def test_decisions_and_cancels_reach_the_owner_and_parked_runs_fail_over():
    with TempDir() as d:
        c, a, b = review_pair(d)
        ids = [a.submit(f"needs approval {i}", key=f"route-{i}") for i in range(6)]
        owner = {r: a.run(r)["node_id"] for r in ids}
        on_a = [r for r in ids if owner[r] == "node-a"]
        on_b = [r for r in ids if owner[r] == "node-b"]
        assert len(on_a) >= 2 and len(on_b) >= 2, f"placement: {owner}"
        for r in ids:
            wait_state(a, r, "waiting")
        # Approve each node's run through the other node.
        decide(a, pending_approval(a, on_b[0]))
        decide(b, pending_approval(b, on_a[0]))
        wait_state(a, on_b[0], "succeeded")
        wait_state(b, on_a[0], "succeeded")
        # Cancel node-b's run through node-a.
        status, _, doc = a.json("POST", f"/v1/runs/{on_b[1]}/cancel")
        assert status == 200, f"cancel via node-a: {status} {doc}"
        wait_state(a, on_b[1], "cancelled")
        # node-b dies with its other runs parked: node-a claims them and they are approved there.
        parked_on_b = on_b[2:]
        b.kill9()
        wait_until(lambda: all(a.run(r)["node_id"] == "node-a" for r in parked_on_b),
                   c.lease_ttl_ms / 1000 + 15, "node-a to claim node-b's parked runs")
        for r in parked_on_b:
            assert a.run(r)["state"] == "waiting"
            decide(a, pending_approval(a, r))
            wait_state(a, r, "succeeded")
            # The kernel that claimed the parked run said so before the approval woke it.
            evs = [json.loads(d) for _, _, d in sse_events(a.port, f"/v1/runs/{r}/events",
                                                            timeout=20, token=OTTO)]
            assert [e["run_seq"] for e in evs] == list(range(1, len(evs) + 1)), evs
            kinds = [e["kind"] for e in evs]
            assert kinds.count("run.recovered") == 1, f"{r}: {kinds}"
            recovered = evs[kinds.index("run.recovered")]
            assert recovered["data"]["node"] == "node-a", recovered
            assert kinds.index("run.recovered") < kinds.index("approval.voted"), kinds
        # node-a's view: node-b dead, holding nothing (its last heartbeat counted parked runs).
        def b_emptied():
            view = {n["id"]: n for n in a.cluster_nodes()["nodes"]}
            return view if view["node-b"]["state"] == "dead" and \
                view["node-b"]["owned_runs"] == 0 else None
        view = wait_until(b_emptied, 10, "node-a to see node-b dead and owning no run")
        assert view["node-b"]["active_runs"] == view["node-b"]["parked_runs"] == 0, view["node-b"]
        with open(c.record) as f:
            keys = [line.strip() for line in f if line.strip()]
        approved = 2 + len(parked_on_b)
        assert len(keys) == len(set(keys)) == approved, f"{len(keys)} side effects: {keys}"
        c.close()


def test_messages_sent_to_another_node_reach_the_runs_owner_once():
    """docs/conversation.md: a message or a question posted to a node that does not own the run
    is committed by the owner's kernel, in the run's order; the run, parked on its approval
    there, takes each once when it wakes; every node lists the same conversation."""
    with TempDir() as d:
        c, a, b = review_pair(d)
        ids = [a.submit(f"needs approval {i}", key=f"say-{i}") for i in range(4)]
        owner = {r: a.run(r)["node_id"] for r in ids}
        for r in ids:
            wait_state(a, r, "waiting")
        for run_id, via in ((r, a if owner[r] == "node-b" else b) for r in ids[:2]):
            status, _, said = via.json("POST", f"/v1/runs/{run_id}/messages",
                                       {"text": "checking the dashboards meanwhile"},
                                       headers={"Idempotency-Key": f"note-{run_id}"})
            assert status == 201, f"message via {via.node_id}: {status} {said}"
            status, _, again = via.json("POST", f"/v1/runs/{run_id}/messages",
                                        {"text": "checking the dashboards meanwhile"},
                                        headers={"Idempotency-Key": f"note-{run_id}"})
            assert status == 200 and again["message"]["id"] == said["message"]["id"], again
            status, _, asked = via.json("POST", f"/v1/runs/{run_id}/messages",
                                        {"text": "what are you doing?"})
            assert status == 201 and asked["reply"]["author"] == "agent", asked
            assert "step" in asked["reply"]["text"], asked
            decide(via, pending_approval(via, run_id))
            wait_state(via, run_id, "succeeded")
            for node in (a, b):
                status, _, doc = node.json("GET", f"/v1/runs/{run_id}/messages")
                assert status == 200, doc
                got = [(m["seq"], m["author"], m["kind"]) for m in doc["messages"]]
                assert got == [(1, "otto", "message"), (2, "otto", "message"),
                               (3, "agent", "reply")], f"{node.node_id}: {got}"
                assert all(m["taken_step"] > 0 for m in doc["messages"]), doc
            steps = a.steps(run_id)
            taken = [s["kind"] for s in steps if s["kind"] in ("message", "reply")]
            assert taken == ["message", "message", "reply"], [s["kind"] for s in steps]
        c.close()


def test_a_node_without_its_peers_says_so_and_runs_goals_itself():
    with TempDir() as d:
        c = Cluster(d, node_extra="model:\n  provider: scripted\n  script:\n"
                                  "    - {tool: test.echo, args: {x: 1}}\n")
        a = c.nodes["node-a"].start()
        doc = wait_until(lambda: (lambda v: v if all(
            n.get("link_error") for n in v["nodes"] if not n["self"]) else None)(
                a.cluster_nodes()), 10, "node-a to try its peers")
        for n in doc["nodes"]:
            if n["self"]:
                assert n["state"] == "alive" and n["connected"], n
            else:
                assert n["state"] == "unknown" and not n["connected"], n
        run = a.submit("alone")
        assert a.wait_run(run)["node_id"] == "node-a"
        b = c.nodes["node-b"]
        log = open(a.log_path, errors="replace").read()
        assert f"peer node-b at 127.0.0.1:" in log and "unreachable" in log, log[-2000:]
        # The CLI's view of the same: this node alive, its peers unknown with the link error.
        env = dict(os.environ, SREH_TOKEN=harness.TOKEN)
        out = subprocess.run([os.path.abspath(harness.SREH), "nodes", "--server",
                              f"127.0.0.1:{a.port}"], capture_output=True, text=True,
                             timeout=30, env=env)
        assert out.returncode == 0, out
        lines = {ln.split()[0]: ln.split() for ln in out.stdout.splitlines()[2:]
                 if ln and not ln.startswith(" ")}
        assert lines["node-a"][1:3] == ["alive", "self"], out.stdout
        assert lines["node-b"][1:3] == ["unknown", "down"], out.stdout
        assert "link:" in out.stdout, out.stdout
        out = subprocess.run([os.path.abspath(harness.SREH), "cluster", "check", c.topology,
                              "--timeout-ms", "500"], capture_output=True, text=True, timeout=30)
        assert out.returncode == 1, out
        assert f"node 'node-b'" in out.stderr and f"127.0.0.1:{b.port}" in out.stderr, out.stderr
        c.close()


def test_a_worker_only_node_runs_placed_goals_but_serves_no_api():
    with TempDir() as d:
        c = Cluster(d, names=("node-a", "node-b"), roles={"node-b": "[worker]"},
                    node_extra="model:\n  provider: scripted\n  script:\n"
                               "    - {tool: test.sleep, args: {ms: 300}}\n").start_all()
        a, b = c.nodes["node-a"], c.nodes["node-b"]
        status, _, doc = b.json("POST", "/v1/goals", {"goal": "to a worker"})
        assert status == 503 and "does not serve the API" in doc["detail"], (status, doc)
        assert "node-b" in doc["detail"], doc
        view = b.cluster_nodes()  # membership and health stay available
        assert [n["roles"] for n in view["nodes"]] == [["api", "worker", "relay"], ["worker"]]
        assert b.request("GET", "/readyz")[0] == 200
        ids = [a.submit(f"placed {i}") for i in range(6)]
        owners = {a.run(r)["node_id"] for r in ids}
        assert owners == {"node-a", "node-b"}, owners
        for r in ids:
            assert a.wait_run(r)["state"] == "succeeded"
        c.close()


BAD_TOPOLOGIES = {
    "duplicate id": ("nodes:\n  - {id: node-a, http: 127.0.0.1:17071, cluster: 127.0.0.1:17171}\n"
                     "  - {id: node-a, http: 127.0.0.1:17072, cluster: 127.0.0.1:17172}\n",
                     "duplicate node id 'node-a'"),
    "unknown role": ("nodes:\n  - {id: node-a, http: 127.0.0.1:17071, cluster: 127.0.0.1:17171,"
                     " roles: [api, worker, janitor]}\n", "janitor"),
    "bad address": ("nodes:\n  - {id: node-a, http: 127.0.0.1:99999, cluster: 127.0.0.1:17171}\n",
                    "nodes[0].http"),
    "same address twice": ("nodes:\n  - {id: node-a, http: 127.0.0.1:17071, "
                           "cluster: 127.0.0.1:17071}\n", "127.0.0.1:17071"),
}


def test_bad_topology_files_are_refused_with_the_reason():
    with TempDir() as d:
        for name, (text, expect) in BAD_TOPOLOGIES.items():
            topo = os.path.join(d, "topology.yaml")
            with open(topo, "w") as f:
                f.write(text)
            cfg = os.path.join(d, "node.yaml")
            with open(cfg, "w") as f:
                f.write("store: {kind: postgres, url: postgresql://nobody@127.0.0.1:1/x}\n"
                        "nats: {url: nats://127.0.0.1:1}\ncluster: {topology: topology.yaml}\n")
            for cmd in (["config", "check", cfg, "--node-id", "node-a"],
                        ["serve", "--config", cfg, "--node-id", "node-a"]):
                out = subprocess.run([os.path.abspath(harness.SREH), *cmd], capture_output=True,
                                     text=True, timeout=30)
                assert out.returncode == 1, f"{name}: {cmd[0]} exited {out.returncode}"
                assert expect in out.stderr and "topology.yaml:" in out.stderr, \
                    f"{name}: {cmd[0]}: {out.stderr}"


if __name__ == "__main__":
    run_tests([test_decisions_and_cancels_reach_the_owner_and_parked_runs_fail_over,
               test_messages_sent_to_another_node_reach_the_runs_owner_once,
               test_a_node_without_its_peers_says_so_and_runs_goals_itself,
               test_a_worker_only_node_runs_placed_goals_but_serves_no_api,
               test_bad_topology_files_are_refused_with_the_reason])
