"""examples/cluster/start.sh and the failover walkthrough of docs/cluster.md, run as a user would
(with SREH_BIN, so it neither installs nor builds): the failover-drill runbook starts, the node
that runs it is killed with kill -9 (its pid file) in the middle of a step, and a survivor claims
the run after the lease, writes run.recovered naming itself, runs the interrupted step again and
finishes the run. `sreh watch` on another node follows all of it; `sreh nodes` then shows the
dead member holding no run. SIGTERM stops everything the script started. Needs the example's
fixed ports free (7071-7073, 7171-7173, 55433, 4223, 8223)."""

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time

from cluster_harness import SOURCE
from harness import SREH, TempDir, run_tests, sreh_cli, sse_events, wait_until

PORTS = (7071, 7072, 7073, 7171, 7172, 7173, 55433, 4223, 8223)
HTTP = {"node-a": 7071, "node-b": 7072, "node-c": 7073}
LEASE_S, HEARTBEAT_S = 5, 0.5  # examples/cluster/topology.yaml
DIR = None


def port_in_use(port):
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def token():
    return open(os.path.join(DIR, "admin.token")).read().strip()


def cli(*args):
    return sreh_cli(list(args), token=token(), timeout=90)


def show(run_id, node):
    rc, out, err = cli("show", run_id, "--server", f"127.0.0.1:{HTTP[node]}", "--json")
    assert rc == 0, err
    return json.loads(out)


def nodes(node):
    rc, out, err = cli("nodes", "--server", f"127.0.0.1:{HTTP[node]}", "--json")
    assert rc == 0, err
    return {n["id"]: n for n in json.loads(out)["nodes"]}


def test_a_run_killed_mid_step_moves_to_a_survivor():
    busy = [p for p in PORTS if port_in_use(p)]
    assert not busy, f"ports {busy} are in use (is examples/cluster/start.sh running?)"
    log_path = os.path.join(DIR, "start.log")
    env = dict(os.environ, SREH_BIN=os.path.abspath(SREH), SREH_CLUSTER_DIR=DIR)
    with open(log_path, "wb") as log:
        p = subprocess.Popen([os.path.join(SOURCE, "examples", "cluster", "start.sh")],
                             stdout=log, stderr=subprocess.STDOUT, env=env)
    watcher = None
    try:
        def up():
            assert p.poll() is None, f"start.sh exited {p.returncode}:\n{open(log_path).read()}"
            return "cluster is up" in open(log_path).read()
        wait_until(up, 60, "start.sh to bring the cluster up")
        assert "failover-drill" in open(log_path).read(), "the banner does not name the drill"
        wait_until(lambda: all(n["state"] == "alive" and n["connected"]
                               for n in nodes("node-a").values()), 30,
                   "`sreh nodes` to show the three members alive and linked")

        # The walkthrough: start the drill, find its node, watch it from another node.
        rc, out, err = cli("flow", "run", "failover-drill", "--server", "127.0.0.1:7071")
        assert rc == 0, f"flow run exited {rc}: {out}{err}"
        rid = out.split()[0]
        owner = show(rid, "node-a")["run"]["node_id"]
        other = next(n for n in HTTP if n != owner)
        print(f"  (run {rid} placed on {owner}; watched on {other})")
        watcher = subprocess.Popen(
            [SREH, "watch", rid, "--server", f"127.0.0.1:{HTTP[other]}"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            env=dict(os.environ, SREH_TOKEN=token()))

        def sleeping():
            steps = show(rid, other)["steps"]
            return steps and steps[-1]["tool"] == "test.sleep" and steps[-1]["state"] == "intent"
        wait_until(sleeping, 30, "the drill to be in the middle of a test.sleep step")
        seen_at = time.time()
        interrupted = show(rid, other)["steps"][-1]["n"]

        # Killed once its row in the store counts the run (as a user's kill, seconds into the
        # step, finds it): the owner heartbeated after the step was seen. Another node's view
        # of its heartbeat's age is at most one heartbeat old.
        def owner_heartbeated():
            age_s = nodes(other)[owner]["heartbeat_age_ms"] / 1000
            return time.time() - HEARTBEAT_S - age_s > seen_at
        wait_until(owner_heartbeated, 10, f"{owner} to heartbeat with the run in flight")
        assert nodes(other)[owner]["active_runs"] == 1, nodes(other)[owner]
        pid = int(open(os.path.join(DIR, f"{owner}.pid")).read())
        os.kill(pid, signal.SIGKILL)
        killed_at = time.time()

        def claimed():
            node = show(rid, other)["run"]["node_id"]
            return node if node != owner else None
        survivor = wait_until(claimed, LEASE_S + 15, f"a survivor to claim the run of {owner}")
        print(f"  ({owner} killed in step {interrupted}; {survivor} claimed the run "
              f"{time.time() - killed_at:.1f} s later)")
        out, _ = watcher.communicate(timeout=90)
        assert watcher.returncode == 0, f"sreh watch exited {watcher.returncode}:\n{out}"
        print("  " + out.replace("\n", "\n  ").rstrip())
        assert f'run.recovered  {{"node":"{survivor}"' in out, out

        doc = show(rid, survivor)
        assert doc["run"]["state"] == "succeeded", doc["run"]
        assert doc["run"]["node_id"] == survivor, doc["run"]
        by_n = {s["n"]: s for s in doc["steps"]}
        assert by_n[interrupted]["tool"] == "test.sleep", by_n[interrupted]
        assert by_n[interrupted]["attempts"] == 2, by_n[interrupted]  # run again on the survivor
        assert all(s["state"] == "succeeded" for s in doc["steps"]), doc["steps"]
        evs = [json.loads(d) for _, _, d in sse_events(HTTP[survivor], f"/v1/runs/{rid}/events",
                                                        timeout=30, token=token())]
        assert [e["run_seq"] for e in evs] == list(range(1, len(evs) + 1)), evs
        recovered = [e for e in evs if e["kind"] == "run.recovered"]
        assert len(recovered) == 1 and recovered[0]["data"]["node"] == survivor, recovered

        # `sreh nodes`: the killed member is dead and holds nothing, in JSON and in the table.
        view = nodes(survivor)
        dead = view[owner]
        assert dead["state"] == "dead" and not dead["connected"], dead
        assert dead["owned_runs"] == dead["active_runs"] == dead["parked_runs"] == 0, dead
        rc, table, err = cli("nodes", "--server", f"127.0.0.1:{HTTP[survivor]}")
        assert rc == 0, err
        print("  " + table.replace("\n", "\n  ").rstrip())
        row = next(line for line in table.splitlines() if line.startswith(owner))
        counts = re.search(r"\s(\d+)\s+(\d+)\s+(\d+)\s+127\.0\.0\.1:", row)  # ACTIVE PARKED OWNED
        assert row.split()[1] == "dead" and counts and counts.groups() == ("0", "0", "0"), row
    finally:
        if watcher and watcher.poll() is None:
            watcher.kill()
            watcher.wait()
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
            p.wait(timeout=60)
    assert not os.path.exists("/tmp/sreh-cluster-pg"), "PostgreSQL left behind"
    assert not os.path.exists("/tmp/sreh-cluster-nats"), "NATS left behind"
    assert not any(port_in_use(p) for p in (7071, 7072, 7073)), "a node left behind"
    assert not any(f.endswith(".pid") for f in os.listdir(DIR)), "pid files left behind"


if __name__ == "__main__":
    code = 1
    with TempDir() as d:
        DIR = d
        try:
            run_tests([test_a_run_killed_mid_step_moves_to_a_survivor])
        except SystemExit as e:
            code = e.code
    sys.exit(code)
