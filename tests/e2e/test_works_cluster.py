"""Works in a three-node cluster (own PostgreSQL and NATS): a Work owned by a node that is
killed with SIGKILL while its run is mid-step is taken over by a survivor, which follows the
run to its end and answers for the Work; the other survivor refuses commands on it, naming the
owner."""

import os

from cluster_harness import Cluster
from harness import TempDir, run_tests, wait_until
from test_works import create, kinds, template_file, works_config


def test_a_work_of_a_killed_node_is_taken_over():
    with TempDir() as d:
        tdir = os.path.join(d, "templates")
        os.makedirs(tdir)
        template_file(tdir, "change", "enqueue")
        c = Cluster(d, node_extra=works_config(tdir) +
                    "model:\n  provider: scripted\n  script:\n"
                    "    - {tool: test.sleep, args: {ms: 3000}}\n"
                    "    - {tool: test.record, args: {action: restart}}\n").start_all()
        a = c.nodes["node-a"]
        status, _, doc = create(a, "change", {"target": "db"})
        assert status == 201, doc
        wid = doc["work"]["id"]
        assert doc["work"]["node_id"] == "node-a", doc["work"]

        def read(node):
            status, _, doc = node.json("GET", f"/v1/works/{wid}")
            assert status == 200, doc
            return doc["work"]

        w = wait_until(lambda: (lambda w: w if w["active_run"] else None)(read(a)), 20,
                       "its run started")
        run_id = w["active_run"]
        a.kill9()
        b = c.nodes["node-b"]
        w = wait_until(lambda: (lambda w: w if w["node_id"] != "node-a" else None)(read(b)),
                       c.lease_ttl_ms / 1000 + 15, "a survivor to take the work over")
        owner = c.nodes[w["node_id"]]
        other = c.nodes["node-c" if owner.node_id == "node-b" else "node-b"]
        done = wait_until(lambda: (lambda w: w if not w["active_run"] and w["runs"] and
                                   w["runs"][0].get("state") == "succeeded" else None)(
                              read(owner)), 30, "the taken-over work to record its run's end")
        assert [r["id"] for r in done["runs"]] == [run_id], done["runs"]
        assert kinds(done).count("work.run_ended") == 1, kinds(done)
        with open(c.record) as f:
            effects = [line.strip() for line in f if line.strip()]
        assert len(effects) == 1, effects  # the run's side effect happened once
        status, _, doc = owner.json("POST", f"/v1/works/{wid}/ack", {"text": "taking it"})
        assert status == 200 and doc["work"]["state"] == "mitigating", doc
        assert doc["work"]["acknowledged_at"], doc["work"]
        status, _, doc = other.json("POST", f"/v1/works/{wid}/comment", {"text": "me too"})
        assert status == 409 and f"owned by node '{owner.node_id}'" in doc["detail"], doc
        c.close()


if __name__ == "__main__":
    run_tests([test_a_work_of_a_killed_node_is_taken_over])
