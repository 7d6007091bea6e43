"""Long-term memory on a real node (docs/memory.md): entries added, searched the way an on-call
engineer types, edited, rolled back and deleted over HTTP and with `sreh memory`; each change
a version with its author in the audit chain (`sreh audit verify`); roles (viewers read,
operators write); bad input of every kind a clear 4xx that changes nothing; and a restart keeps
it all (SQLite FTS5 on disk)."""

import json
import os
import sqlite3
import urllib.parse

from harness import Node, TempDir, auth_block, run_tests, sreh_cli

TOKENS = {
    "vera": ("viewer", "vera-secret-token"),
    "otto": ("operator", "otto-secret-token"),
    "olga": ("operator", "olga-secret-token"),
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


if __name__ == "__main__":
    run_tests([test_memory_round_trip_with_versions_roles_and_audit,
               test_bad_input_is_a_clear_4xx_and_changes_nothing,
               test_the_cli_adds_searches_edits_rolls_back_and_removes])
