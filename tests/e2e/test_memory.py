"""Long-term memory on a real node (docs/memory.md): entries added, searched the way an on-call
engineer types, edited, rolled back and deleted over HTTP and with `sreh memory`; each change
a version with its author in the audit chain (`sreh audit verify`); roles (viewers read,
operators write); bad input of every kind a clear 4xx that changes nothing; and a restart keeps
it all (SQLite FTS5 on disk). In reasoning: a sandbox incident recalls a past case of the same
kind on another service as its first step and takes fewer steps; a misleading past case costs
steps, never a wrong conclusion or an unsafe action."""

import http.client
import json
import os
import sqlite3
import urllib.parse

from harness import Node, TempDir, auth_block, run_tests, sreh_cli, sse_events, wait_until

ROOT = os.environ.get("SREH_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
SCENARIO = os.path.abspath(os.path.join(ROOT, "examples", "scenarios",
                                        "shop-checkout-bad-deploy.yaml"))
GOAL = "frontend is returning errors; find the cause and mitigate"
ALERT = {"alert": "HighErrorRate", "service": "frontend", "severity": "page"}

TOKENS = {
    "vera": ("viewer", "vera-secret-token"),
    "otto": ("operator", "otto-secret-token"),
    "olga": ("operator", "olga-secret-token"),
    "alice": ("approver", "alice-secret-token"),
}


def tok(name):
    return TOKENS[name][1]


def problem(status, doc, fragment):
    assert doc and doc.get("status") == status, doc
    assert fragment in doc.get("detail", ""), doc


def add(node, kind, text, labels=None, who="otto"):
    body = {"kind": kind, "text": text}
    if labels:
        body["labels"] = labels
    status, headers, doc = node.json("POST", "/v1/memory", body, token=tok(who))
    assert status == 201, doc
    assert headers.get("location") == "/v1/memory/" + doc["memory"]["id"], headers
    return doc["memory"]


def search(node, q, extra=""):
    status, _, doc = node.json("GET", "/v1/memory?q=" + urllib.parse.quote(q) + extra,
                               token=tok("vera"))
    assert status == 200, doc
    return doc["memories"]


def logged_changes(node, mem_id):
    """The entry's events in the node's event log (the audit chain), read from the file."""
    db = sqlite3.connect(os.path.join(node.data, "sreh.db"))
    try:
        rows = db.execute("SELECT kind, data FROM events WHERE run_id = ? ORDER BY seq",
                          (mem_id,)).fetchall()
    finally:
        db.close()
    return [(kind, json.loads(data)["author"]) for kind, data in rows]


def test_memory_round_trip_with_versions_roles_and_audit():
    with TempDir() as d:
        node = Node(d, auth=auth_block(TOKENS), token=tok("otto")).start()
        pool = add(node, "incident",
                   "checkout returned 502s: the orders database connection pool was exhausted "
                   "after the v2.3 release; raising the pool size fixed it, restarting did not",
                   {"service": "checkout", "fault": "pool-exhaustion"})
        add(node, "note", "TLS certificates on the edge are renewed by cert-manager",
            {"service": "edge"})
        add(node, "runbook", "Disk full on a host: rotate the logs first, then grow the volume",
            {"fault": "disk-full"})
        assert pool["version"] == 1 and pool["author"] == "otto" and pool["change"] == "create"

        # Searched as typed: other words, inflections, filler; the right one first.
        hits = search(node, "why is checkout failing with 502 after the release")
        assert hits and hits[0]["id"] == pool["id"], hits
        assert 0 < hits[0]["score"] <= 1 and set(hits[0]["parts"]) == {
            "text", "labels", "entities", "recency"}, hits[0]
        assert [h["id"] for h in search(node, "pools exhausted")] == [pool["id"]]
        assert search(node, "zebra") == []
        # A label filter and a kind restrict; syntax is searched as words, never an SQL error.
        assert [h["kind"] for h in search(node, "", "&kind=runbook")] == ["runbook"]
        assert len(search(node, "", "&label=service=checkout")) == 1
        for q in ['"unbalanced', "NEAR(", "a AND OR NOT", "'; DROP TABLE memories; --", "*"]:
            status, _, doc = node.json("GET", "/v1/memory?q=" + urllib.parse.quote(q),
                                       token=tok("vera"))
            assert status == 200, (q, doc)

        # Edit, rollback, delete: each the next version, by its author.
        path = "/v1/memory/" + pool["id"]
        status, _, doc = node.json("PUT", path, {"text": "checkout 502s: pool too small"},
                                   token=tok("olga"))
        assert status == 200 and doc["memory"]["version"] == 2, doc
        assert doc["memory"]["author"] == "olga" and doc["memory"]["labels"]["service"] == "checkout"
        status, _, doc = node.json("POST", path + "/rollback", {"version": 1}, token=tok("otto"))
        assert status == 200 and doc["memory"]["version"] == 3, doc
        assert doc["memory"]["text"] == pool["text"] and doc["memory"]["restored_from"] == 1
        status, _, doc = node.json("DELETE", path, token=tok("olga"))
        assert status == 200 and doc["memory"]["deleted"] and doc["memory"]["version"] == 4, doc
        assert search(node, "pools exhausted") == []
        status, _, doc = node.json("GET", path, token=tok("vera"))
        assert status == 200 and doc["memory"]["deleted"], doc
        status, _, doc = node.json("GET", path + "/versions", token=tok("vera"))
        assert [v["version"] for v in doc["versions"]] == [4, 3, 2, 1], doc
        assert [v["author"] for v in doc["versions"]] == ["olga", "otto", "olga", "otto"]
        status, _, doc = node.json("POST", path + "/rollback", {"version": 2}, token=tok("otto"))
        assert status == 200 and not doc["memory"]["deleted"], doc
        assert [h["id"] for h in search(node, "pool too small")] == [pool["id"]]

        # Viewers read, operators write.
        status, _, doc = node.json("POST", "/v1/memory", {"kind": "note", "text": "x"},
                                   token=tok("vera"))
        problem(403, doc, "needs operator")
        status, _, doc = node.json("PUT", path, {"text": "x"}, token=tok("vera"))
        assert status == 403, doc

        # Each change is an event of the audit chain, with its author.
        node.stop()
        kinds = logged_changes(node, pool["id"])
        assert kinds == [("memory.created", "otto"), ("memory.edited", "olga"),
                         ("memory.rolled_back", "otto"), ("memory.deleted", "olga"),
                         ("memory.rolled_back", "otto")], kinds
        code, out, err = sreh_cli(["audit", "verify", "--data-dir", node.data])
        assert code == 0, out + err

        # A restart keeps every entry, version and the index.
        node = Node(d, auth=auth_block(TOKENS), token=tok("otto")).start()
        assert [h["id"] for h in search(node, "pool too small")] == [pool["id"]]
        status, _, doc = node.json("GET", path + "/versions", token=tok("vera"))
        assert len(doc["versions"]) == 5, doc
        node.stop()


def test_bad_input_is_a_clear_4xx_and_changes_nothing():
    with TempDir() as d:
        node = Node(d, auth=auth_block(TOKENS), token=tok("otto")).start()
        m = add(node, "note", "restart the consumer")
        path = "/v1/memory/" + m["id"]
        cases = [
            ("POST", "/v1/memory", None, 400, "a JSON body"),
            ("POST", "/v1/memory", "{not json", 400, ""),
            ("POST", "/v1/memory", [1, 2], 400, "object"),
            ("POST", "/v1/memory", {"text": "x"}, 400, "kind is required"),
            ("POST", "/v1/memory", {"kind": "memo", "text": "x"}, 400, "unknown kind 'memo'"),
            ("POST", "/v1/memory", {"kind": "note", "text": ""}, 400, "text is empty"),
            ("POST", "/v1/memory", {"kind": "note", "text": 7}, 400, "text must be a string"),
            ("POST", "/v1/memory", {"kind": "note", "text": "x" * 70000}, 413,
             "text is 70000 bytes, over the limit of 65536"),
            ("POST", "/v1/memory", {"kind": "note", "text": "x", "labels": {"a": 1}}, 400,
             "labels.a must be a string"),
            ("POST", "/v1/memory", {"kind": "note", "text": "x", "owner": "me"}, 400,
             "unknown member 'owner'"),
            ("PUT", path, {}, 400, "nothing to change"),
            ("PUT", path, {"text": ""}, 400, "text is empty"),
            ("PUT", "/v1/memory/mem_01ARZ3NDEKTSV4RRFFQ69G5FAV", {"text": "x"}, 404, "no memory"),
            ("PUT", "/v1/memory/nope", {"text": "x"}, 400, "malformed"),
            ("GET", "/v1/memory/mem_01ARZ3NDEKTSV4RRFFQ69G5FAV", None, 404, "no memory"),
            ("POST", path + "/rollback", {"version": 9}, 404, "has no version 9"),
            ("POST", path + "/rollback", {"version": 1}, 400, "not an earlier version"),
            ("POST", path + "/rollback", {"version": "1"}, 400, "{\"version\": N}"),
            ("GET", "/v1/memory?limit=0", None, 400, "limit"),
            ("GET", "/v1/memory?limit=101", None, 400, "limit must be 1..100"),
            ("GET", "/v1/memory?kind=memo", None, 400, "kind: 'memo'"),
            ("GET", "/v1/memory?label=service", None, 400, "label: expected key=value"),
            ("GET", "/v1/memory?q=" + "a" * 1100, None, 400, "q is 1100 bytes"),
        ]
        for method, p, body, status, fragment in cases:
            raw = body.encode() if isinstance(body, str) else body
            got, _, doc = node.json(method, p, raw, token=tok("otto"),
                                    headers={"Content-Type": "application/json"})
            assert got == status, (method, p, body, got, doc)
            assert fragment in doc.get("detail", ""), (method, p, doc)
        status, _, doc = node.json("GET", path + "/versions", token=tok("vera"))
        assert len(doc["versions"]) == 1, doc  # nothing changed
        assert len(search(node, "")) == 1
        node.stop()


def test_the_cli_adds_searches_edits_rolls_back_and_removes():
    with TempDir() as d:
        node = Node(d, auth=auth_block(TOKENS), token=tok("otto")).start()
        server = ["--server", f"127.0.0.1:{node.port}"]

        def cli(*args, who="otto"):
            return sreh_cli(["memory", *args, *server], token=tok(who))

        code, out, err = cli("add", "--kind", "incident", "--text",
                             "search latency doubled after the index rebuild", "--label",
                             "service=search", "--json")
        assert code == 0, err
        mid = json.loads(out)["memory"]["id"]
        code, out, err = cli("search", "search", "slow", "after", "rebuilding", "index")
        assert code == 0 and mid in out and "service=search" in out, out + err
        code, out, err = cli("edit", mid, "--text", "latency doubled: the rebuild ran at peak")
        assert code == 0 and "v2" in out, out + err
        code, out, err = cli("rollback", mid, "--version", "1")
        assert code == 0 and "v3" in out and "index rebuild" in out, out + err
        code, out, err = cli("show", mid, "--versions")
        assert code == 0 and out.count(mid) == 3, out
        code, out, err = cli("rm", mid, who="vera")
        assert code != 0 and "operator" in out + err, out + err
        code, out, err = cli("rm", mid)
        assert code == 0 and "deleted" in out, out + err
        code, out, err = cli("search", "index")
        assert code == 0 and "no memories match" in out, out
        code, out, err = cli("add", "--text", "x")
        assert code == 2 and "--kind" in err, err
        code, out, err = cli("show", "nope")
        assert code == 2 and "not a memory id" in err, err
        node.stop()


def obj(x):
    """A step's args or result: the API serves JSON objects as they are, text as text."""
    return json.loads(x) if isinstance(x, str) else x


def incident(d, memories=()):
    """The sandbox incident (a bad release of checkout behind the alerted frontend) on a fresh
    node that remembers `memories` (kind, text, labels): the run's steps and conclusion."""
    node = Node(d, "model: {provider: builtin}\nsandbox: {scenario: " + SCENARIO + "}\n",
                auth=auth_block(TOKENS), token=tok("otto")).start()
    try:
        ids = [add(node, kind, text, labels)["id"] for kind, text, labels in memories]
        status, _, doc = node.json("POST", "/v1/goals", {"goal": GOAL, "labels": ALERT},
                                   token=tok("otto"))
        assert status == 201, doc
        run = node.wait_run(doc["run"]["id"], states=("succeeded",), timeout=60)
        steps = node.steps(run["id"])
        result = steps[-1]["decision"]["detail"]["result"]
        return ids, steps, result
    finally:
        node.stop()


def test_a_past_case_is_recalled_first_and_saves_steps_but_never_misleads():
    # Before: nothing remembered, no recall step.
    with TempDir() as d:
        _, plain, plain_result = incident(d)
    assert all(s["tool"] != "memory.search" for s in plain), [s["tool"] for s in plain]
    assert plain_result["root_cause"] == ["bad_deploy"], plain_result
    assert plain_result["localized"] == ["checkout"], plain_result
    assert plain_result["memories"] == [], plain_result

    # After: a resolved incident of the same kind on another service (payments), in other words.
    past = ("incident", "payments returned 5xx errors right after a release; rolling back to the "
            "previous version fixed it", {"service": "payments", "fault": "bad_deploy"})
    with TempDir() as d:
        (mem,), helped, helped_result = incident(d, [past])
    first = helped[0]
    assert first["n"] == 1 and first["tool"] == "memory.search", first
    assert first["state"] == "succeeded" and first["decision"].get("recall") is True, first
    recalled = obj(first["result"])["memories"]
    assert [m["id"] for m in recalled] == [mem], recalled
    assert recalled[0]["version"] == 1 and 0 < recalled[0]["score"] <= 1, recalled
    assert obj(first["args"])["near"] == ALERT, first["args"]
    assert helped_result["root_cause"] == ["bad_deploy"], helped_result
    assert helped_result["localized"] == ["checkout"], helped_result
    assert helped_result["memories"] == [
        {"id": mem, "version": 1, "step": 1, "score": recalled[0]["score"],
         "fault": "bad_deploy", "borne_out": True}], helped_result
    # The recall counts as a step, and still the run is shorter: the past case's fault (a
    # release) is checked before checkout's healthy dependencies are described.
    print(f"steps without memory: {len(plain)}, with the past case: {len(helped)}")
    assert len(helped) < len(plain), ([s["tool"] for s in plain], [s["tool"] for s in helped])
    deploys = [s["n"] for s in helped if s["tool"] == "deploys.list"]
    plain_deploys = [s["n"] for s in plain if s["tool"] == "deploys.list"]
    assert deploys and plain_deploys and deploys[0] < plain_deploys[0], (deploys, plain_deploys)

    # A misleading past case (another cause on the alerted service itself) is checked, not
    # believed: the same conclusion, no restart of anything, and it is on record as not borne out.
    wrong = ("incident", "frontend returning errors: a memory leak in the session cache, fixed by "
             "restarting frontend", {"service": "frontend", "fault": "memory_leak"})
    with TempDir() as d:
        (bad,), misled, misled_result = incident(d, [wrong])
    assert misled[0]["tool"] == "memory.search", misled[0]
    assert misled_result["root_cause"] == ["bad_deploy"], misled_result
    assert misled_result["localized"] == ["checkout"], misled_result
    remedies = [s["tool"] for s in misled if s["tool"] in ("service.restart", "deploy.rollback")]
    assert remedies == ["deploy.rollback"], remedies
    assert [(m["id"], m["borne_out"]) for m in misled_result["memories"]] == [(bad, False)]
    print(f"steps with a misleading past case: {len(misled)}")
    assert len(misled) >= len(helped), (len(misled), len(helped))


# The same kind of incident later, on another service: a bad release of catalog (checkout's was
# the first), told in other words, with another release (search's) as a herring.
CATALOG_SCENARIO = """scenario: shop-catalog-bad-release
world: {world}
seed: 11
faults:
  - {{kind: bad_deploy, target: catalog, version: v3.2.0, at: -8m}}
herrings:
  - {{kind: deploy, target: search, version: v1.4.3, at: -30m}}
alert:
  name: HighErrorRate
  labels: {{service: frontend, severity: page}}
goal: "the storefront is failing for shoppers; find out why and fix it"
expect:
  detected: true
  localized: [catalog]
  root_cause: bad_deploy
  mitigated: "catalog.error_rate < 0.01 and frontend.error_rate < 0.01"
  max_steps: 20
"""
CATALOG_GOAL = "the storefront is failing for shoppers; find out why and fix it"


def markdown(node, run_id):
    conn = http.client.HTTPConnection("127.0.0.1", node.port, timeout=10)
    conn.request("GET", f"/v1/runs/{run_id}/postmortem",
                 headers={"Accept": "text/markdown", "Authorization": "Bearer " + tok("vera")})
    r = conn.getresponse()
    body = r.read().decode()
    conn.close()
    assert r.status == 200 and r.getheader("content-type").startswith("text/markdown"), body
    return body


def sandbox_node(d, scenario, mode):
    return Node(d, f"policy_mode: {mode}\nmodel: {{provider: builtin}}\n"
                   f"sandbox: {{scenario: {scenario}}}\n",
                auth=auth_block(TOKENS), token=tok("otto")).start()


def catalog_incident(node):
    status, _, doc = node.json("POST", "/v1/goals", {"goal": CATALOG_GOAL, "labels": ALERT},
                               token=tok("otto"))
    assert status == 201, doc
    run = node.wait_run(doc["run"]["id"], states=("succeeded",), timeout=60)
    steps = node.steps(run["id"])
    return steps, steps[-1]["decision"]["detail"]["result"]


def test_an_incident_ends_in_a_postmortem_that_the_next_one_recalls():
    with TempDir() as d:
        catalog = os.path.join(d, "catalog.yaml")
        with open(catalog, "w") as f:
            f.write(CATALOG_SCENARIO.format(
                world=os.path.abspath(os.path.join(ROOT, "examples", "worlds", "shop.yaml"))))
        # The second incident alone, on a node that remembers nothing: the figure to beat.
        os.makedirs(os.path.join(d, "fresh"))
        fresh = sandbox_node(os.path.join(d, "fresh"), catalog, "autonomous")
        try:
            alone, alone_result = catalog_incident(fresh)
        finally:
            fresh.stop()
        assert alone_result["root_cause"] == ["bad_deploy"], alone_result
        assert alone_result["localized"] == ["catalog"], alone_result

        # The first incident, in review mode: alice approves the rollback.
        node = sandbox_node(d, SCENARIO, "review")
        status, _, doc = node.json("POST", "/v1/goals", {"goal": GOAL, "labels": ALERT},
                                   token=tok("otto"))
        assert status == 201, doc
        run_id = doc["run"]["id"]
        approval = None
        for _, kind, data in sse_events(node.port, f"/v1/runs/{run_id}/events", timeout=60,
                                        token=tok("otto")):
            if kind == "approval.requested":
                approval = json.loads(data)["data"]["approval"]
                break
        assert approval, "the rollback never asked for approval"
        status, _, doc = node.json("POST", f"/v1/approvals/{approval}/decision",
                                   {"decision": "approve", "comment": "rollback is safe"},
                                   token=tok("alice"))
        assert status == 200, doc
        node.wait_run(run_id, states=("succeeded",), timeout=60)
        steps = node.steps(run_id)
        by_n = {s["n"]: s for s in steps}
        result = steps[-1]["decision"]["detail"]["result"]

        # Its postmortem, checked against the journal.
        status, _, doc = node.json("GET", f"/v1/runs/{run_id}/postmortem", token=tok("vera"))
        assert status == 200, doc
        pm = doc["postmortem"]
        assert pm["run_id"] == run_id and pm["outcome"] == "succeeded", pm
        (cause,) = pm["root_cause"]
        assert (cause["kind"], cause["target"]) == ("bad_deploy", "checkout"), cause
        evidence = sorted({e["step"] for e in result["diagnoses"][0]["evidence"] if e["step"] > 0})
        assert cause["evidence_steps"] == evidence and evidence, (cause, evidence)
        assert all(by_n[n]["state"] == "succeeded" for n in evidence), evidence
        (rollback,) = [a for a in pm["actions"] if a["tool"] == "deploy.rollback"]
        assert rollback["approved_by"] == "alice" and rollback["verified"], rollback
        assert by_n[rollback["step"]]["tool"] == "deploy.rollback", rollback
        # The timeline has every step, and the vote with who cast it, in time order.
        timeline_steps = {e["step"] for e in pm["timeline"] if e["step"] > 0}
        assert timeline_steps == set(by_n), (timeline_steps, sorted(by_n))
        assert any(e["what"].startswith("approved by alice (approver): rollback is safe")
                   for e in pm["timeline"]), pm["timeline"]
        ats = [e["at"] for e in pm["timeline"]]
        assert ats == sorted(ats), ats
        assert any("make it a flow" in f for f in pm["follow_ups"]), pm["follow_ups"]
        md = markdown(node, run_id)
        assert md.startswith("# Postmortem: frontend: bad_deploy on checkout"), md[:200]
        assert "approved by alice" in md and "## Follow-ups" in md, md
        assert markdown(node, run_id) == md  # regenerating gives the same document
        # The CLI prints the same Markdown.
        code, out, err = sreh_cli(["postmortem", run_id, "--server", f"127.0.0.1:{node.port}"],
                                  token=tok("vera"))
        assert code == 0 and out.strip() == md.strip(), (code, err)
        code, out, err = sreh_cli(["postmortem", "run_nope", "--server",
                                   f"127.0.0.1:{node.port}"], token=tok("vera"))
        assert code == 1 and "run id 'run_nope' is malformed" in err, (code, err)

        # It is in memory, as a postmortem of that run.
        def stored():
            found = search(node, "", f"&label=run={run_id}&kind=postmortem")
            return found or None
        (entry,) = wait_until(stored, 20, "the postmortem to be written into memory")
        assert entry["labels"]["fault"] == "bad_deploy", entry
        assert entry["labels"]["service"] == "frontend", entry
        assert entry["text"].startswith("frontend: bad_deploy on checkout (run " + run_id), entry
        assert "Cause: bad_deploy on checkout." in entry["text"], entry["text"]
        assert "## Timeline" not in entry["text"], entry["text"]
        node.stop()

        # The second incident, on the same data: it recalls the postmortem first and is shorter.
        node = sandbox_node(d, catalog, "autonomous")
        try:
            later, later_result = catalog_incident(node)
        finally:
            node.stop()
        assert later[0]["tool"] == "memory.search", later[0]
        recalled = [m["id"] for m in obj(later[0]["result"])["memories"]]
        assert entry["id"] in recalled, (entry["id"], recalled)
        assert later_result["root_cause"] == ["bad_deploy"], later_result
        assert later_result["localized"] == ["catalog"], later_result
        (mem,) = [m for m in later_result["memories"] if m["id"] == entry["id"]]
        assert mem["borne_out"] is True, mem
        # The steps the reasoner chose (the recall is the kernel's): fewer, because the release
        # is checked before catalog's healthy dependencies are described.
        chosen = later[1:]
        print(f"catalog incident: {len(alone)} steps alone; after the checkout postmortem "
              f"{len(later)} with the recall, {len(chosen)} chosen by the reasoner")
        assert len(chosen) < len(alone), ([s["tool"] for s in alone], [s["tool"] for s in later])
        described = [obj(s["args"]).get("service") for s in later if s["tool"] == "service.describe"]
        assert "catalog-db" not in described, described


if __name__ == "__main__":
    run_tests([test_memory_round_trip_with_versions_roles_and_audit,
               test_bad_input_is_a_clear_4xx_and_changes_nothing,
               test_the_cli_adds_searches_edits_rolls_back_and_removes,
               test_a_past_case_is_recalled_first_and_saves_steps_but_never_misleads,
               test_an_incident_ends_in_a_postmortem_that_the_next_one_recalls])
