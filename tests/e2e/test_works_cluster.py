"""Works in a three-node cluster (own PostgreSQL and NATS). Any node answers for any Work: a
command sent to a member that does not own the Work is forwarded to the owner over the cluster
links and answers as the owner would; Alertmanager posting to each node in turn updates one
Work. A Work owned by a node that is killed with SIGKILL while its run is mid-step is taken over
by a survivor, which follows the run to its end; a command sent to a survivor before any took
the Work over claims it first."""

import json
import os
import shutil

from cluster_harness import Cluster
from harness import TOKEN, TempDir, run_tests, wait_until
from test_alertmanager import INCIDENT, alert_entries, fixture, post
from test_works import create, kinds, template_file, work, works_config


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
        # The other survivor forwards to the owner and answers with the Work as it is now.
        status, _, doc = other.json("POST", f"/v1/works/{wid}/comment", {"text": "me too"})
        assert status == 200 and doc["work"]["node_id"] == owner.node_id, (status, doc)
        texts = [e["data"].get("text") for e in read(owner)["timeline"]
                 if e["kind"] == "work.comment"]
        assert texts.count("me too") == 1, read(owner)["timeline"]
        c.close()


def cluster_with_works(d, extra=""):
    tdir = os.path.join(d, "templates")
    os.makedirs(tdir)
    template_file(tdir, "change", "enqueue")
    shutil.copy(INCIDENT, tdir)
    return Cluster(d, node_extra=works_config(tdir) + extra +
                   "model:\n  provider: scripted\n  script:\n"
                   "    - {tool: test.echo, args: {service: checkout}}\n").start_all()


def test_every_command_sent_to_a_non_owner_is_forwarded():
    with TempDir() as d:
        c = cluster_with_works(d)
        a, b, cc = c.nodes["node-a"], c.nodes["node-b"], c.nodes["node-c"]
        status, _, doc = create(a, "change", {"target": "db"})
        assert status == 201 and doc["work"]["node_id"] == "node-a", doc
        wid = doc["work"]["id"]
        steps = [(b, "ack", {"text": "on it"}, None),
                 (cc, "comment", {"text": "graphs attached"}, None),
                 (b, "trigger", {"text": "look again"}, None),
                 (cc, "resolve", {"text": "fixed"}, "resolved"),
                 (b, "reopen", {"text": "it is back"}, "open"),
                 (cc, "cancel", {"text": "false alarm"}, "cancelled")]
        for node, cmd, body, state in steps:
            status, _, doc = node.json("POST", f"/v1/works/{wid}/{cmd}", body)
            assert status == 200, (node.node_id, cmd, status, doc)
            assert doc["work"]["node_id"] == "node-a", doc
            assert state is None or doc["work"]["state"] == state, (cmd, doc["work"]["state"])
        # An illegal transition sent to a non-owner is refused as the owner refuses it.
        status, _, doc = b.json("POST", f"/v1/works/{wid}/resolve", {"text": "again"})
        assert status == 409, (status, doc)
        status, _, own = a.json("POST", f"/v1/works/{wid}/resolve", {"text": "again"})
        assert own["detail"] == doc["detail"], (own, doc)
        status, _, doc = b.json("POST", "/v1/works/wrk_01" + "Z" * 24 + "/ack", {})
        assert status == 404, (status, doc)
        w = a.json("GET", f"/v1/works/{wid}")[2]["work"]
        assert kinds(w).count("work.comment") == 1, kinds(w)
        c.close()


def test_alertmanager_posting_to_each_node_in_turn_updates_one_work():
    with TempDir() as d:
        c = cluster_with_works(d, "alertmanager:\n  receiver: {template: incident}\n")
        old = fixture("alertmanager-0.25.json")
        status, _, doc = post(c.nodes["node-a"], old, token=TOKEN)
        assert status == 201 and doc["created"], doc
        wid = doc["work"]["id"]
        # An HA pair of Alertmanagers (or a load balancer) sends the same group to other members.
        one = json.loads(json.dumps(old))
        one["alerts"][0]["status"] = "resolved"
        one["alerts"][0]["endsAt"] = "2026-12-01T10:20:00Z"
        for name, payload in (("node-b", old), ("node-c", one), ("node-b", one)):
            status, _, doc = post(c.nodes[name], payload, token=TOKEN)
            assert status == 200 and doc["work"]["id"] == wid and not doc["created"], (name, doc)
        status, _, doc = c.nodes["node-c"].json("GET", "/v1/works?limit=50")
        assert [w["id"] for w in doc["works"]] == [wid], doc
        entries = alert_entries(work(c.nodes["node-b"], wid))
        assert entries[-1]["resolved"] == ["5f8b2a9c3d4e1f07"], entries
        c.close()


def test_a_command_to_a_survivor_claims_the_work_of_a_dead_owner_first():
    with TempDir() as d:
        c = cluster_with_works(d)
        a, b = c.nodes["node-a"], c.nodes["node-b"]
        status, _, doc = create(a, "change", {"target": "db"})
        wid = doc["work"]["id"]
        a.kill9()

        def answered():
            status, _, doc = b.json("POST", f"/v1/works/{wid}/comment", {"text": "anyone?"})
            if status == 503:
                return None  # the owner's lease has not run out yet: retry, as a client does
            assert status == 200, (status, doc)
            return doc
        doc = wait_until(answered, c.lease_ttl_ms / 1000 + 15, "the command to succeed")
        assert doc["work"]["node_id"] in ("node-b", "node-c"), doc
        w = work(b, wid)
        texts = [e["data"].get("text") for e in w["timeline"] if e["kind"] == "work.comment"]
        assert texts == ["anyone?"], w["timeline"]
        c.close()


if __name__ == "__main__":
    run_tests([test_a_work_of_a_killed_node_is_taken_over,
               test_every_command_sent_to_a_non_owner_is_forwarded,
               test_alertmanager_posting_to_each_node_in_turn_updates_one_work,
               test_a_command_to_a_survivor_claims_the_work_of_a_dead_owner_first])
