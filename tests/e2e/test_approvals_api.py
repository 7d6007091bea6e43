"""The approvals API end to end: a run in review mode asks for approval of a mutating tool;
list/get/decide over HTTP with role checks, self-approval refused, a second decision 409,
approve runs the action once, deny stops it; and the CLI's approvals/approve/deny.
"""

import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from harness import Node, TempDir, auth_block, run_tests, sreh_cli  # noqa: E402

PLAN = """policy_mode: review
model:
  provider: scripted
  script:
    - {tool: test.record, args: {action: restart checkout}}
"""
TOKENS = {
    "vera": ("viewer", "vera-secret-token"),
    "otto": ("operator", "otto-secret-token"),
    "alice": ("approver", "alice-secret-token"),
    "root": ("admin", "root-secret-token"),
}
N = None


def tok(name):
    return TOKENS[name][1]


def submit(goal):
    status, _, doc = N.json("POST", "/v1/goals", {"goal": goal}, token=tok("otto"))
    assert status == 201, (status, doc)
    return doc["run"]["id"]


def pending_for(rid, timeout=20):
    deadline = time.time() + timeout
    while time.time() < deadline:
        status, _, doc = N.json("GET", f"/v1/approvals?state=pending&run={rid}", token=tok("vera"))
        assert status == 200, (status, doc)
        if doc["approvals"]:
            return doc["approvals"][0]
        time.sleep(0.05)  # polling for the run to reach its approval step, bounded
    raise AssertionError(f"no pending approval for {rid}")


def wait_state(rid, states, timeout=20):
    deadline = time.time() + timeout
    while time.time() < deadline:
        run = N.json("GET", f"/v1/runs/{rid}", token=tok("vera"))[2]
        if run["state"] in states:
            return run
        time.sleep(0.05)  # polling, bounded by the deadline
    raise AssertionError(f"run {rid} never reached {states}: {run['state']}")


def decide(aid, who, decision, comment=None):
    body = {"decision": decision}
    if comment is not None:
        body["comment"] = comment
    return N.json("POST", f"/v1/approvals/{aid}/decision", body, token=tok(who))


def test_list_and_get_shape():
    rid = submit("needs approval")
    a = pending_for(rid)
    assert a["id"].startswith("apr_") and a["run_id"] == rid and a["state"] == "pending", a
    assert a["tool"] == "test.record" and a["requester"] == "otto" and a["votes"] == [], a
    assert a["args"] == {"action": "restart checkout"}, a
    status, _, doc = N.json("GET", f"/v1/approvals/{a['id']}", token=tok("vera"))
    assert status == 200 and doc["approval"]["id"] == a["id"], (status, doc)
    status, _, doc = N.json("GET", "/v1/approvals?state=approved", token=tok("vera"))
    assert status == 200 and all(x["state"] == "approved" for x in doc["approvals"])
    for bad in ("/v1/approvals?state=maybe", "/v1/approvals?limit=0", "/v1/approvals?run=x",
                "/v1/approvals?role=king", "/v1/approvals/apr_short"):
        assert N.request("GET", bad, token=tok("vera"))[0] == 400, bad
    assert N.request("GET", "/v1/approvals/apr_01ARZ3NDEKTSV4RRFFQ69G5FAV",
                     token=tok("vera"))[0] == 404


def test_roles_self_approval_and_approve_once():
    rid = submit("approve me")
    a = pending_for(rid)
    assert decide(a["id"], "vera", "approve")[0] == 403
    assert decide(a["id"], "otto", "approve")[0] == 403   # operator: role too low
    status, _, doc = decide(a["id"], "alice", "maybe")
    assert status == 400, (status, doc)
    status, _, doc = decide(a["id"], "alice", "happened")  # only for in_doubt approvals
    assert status == 400, (status, doc)
    status, _, doc = decide(a["id"], "alice", "approve", "looks fine")
    assert status == 200, (status, doc)
    ap = doc["approval"]
    assert ap["state"] == "approved", ap
    assert ap["votes"][0]["by"] == "alice" and ap["votes"][0]["comment"] == "looks fine", ap
    assert decide(a["id"], "root", "deny")[0] == 409
    assert wait_state(rid, ("succeeded", "failed"))["state"] == "succeeded"
    steps = N.json("GET", f"/v1/runs/{rid}/steps", token=tok("vera"))[2]["steps"]
    ran = [s for s in steps if s.get("tool") == "test.record" and s["state"] == "succeeded"]
    assert len(ran) == 1, json.dumps(steps)[:500]
    with open(N.record) as f:
        assert f.read().count(f"{rid}:") == 1, "the approved action did not run exactly once"


def test_requester_may_not_decide():
    status, _, doc = N.json("POST", "/v1/goals", {"goal": "mine"}, token=tok("alice"))
    assert status == 201
    a = pending_for(doc["run"]["id"])
    status, _, doc = decide(a["id"], "alice", "approve")
    assert status == 403, (status, doc)


def test_deny_stops_the_action():
    rid = submit("deny me")
    a = pending_for(rid)
    status, _, doc = decide(a["id"], "alice", "deny", "no")
    assert status == 200 and doc["approval"]["state"] == "denied", (status, doc)
    run = wait_state(rid, ("succeeded", "failed", "cancelled"))
    steps = N.json("GET", f"/v1/runs/{rid}/steps", token=tok("vera"))[2]["steps"]
    assert not any(s.get("tool") == "test.record" and s["state"] == "succeeded" for s in steps), \
        json.dumps(steps)[:500]
    assert run["state"] in ("failed", "succeeded", "cancelled")


def test_cli_approvals_approve_deny():
    server = ["--server", f"127.0.0.1:{N.port}"]
    rid = submit("cli approval")
    a = pending_for(rid)
    code, out, err = sreh_cli(["approvals"] + server, token=tok("vera"))
    assert code == 0 and a["id"] in out and "test.record" in out and "0/1" in out, (out, err)
    code, out, err = sreh_cli(["approve", a["id"]] + server, token=tok("otto"))
    assert code == 1 and "approver" in err, (code, out, err)
    code, out, err = sreh_cli(["approve", a["id"], "--comment", "ok"] + server, token=tok("alice"))
    assert code == 0 and "approved" in out, (code, out, err)
    code, out, err = sreh_cli(["deny", a["id"]] + server, token=tok("root"))
    assert code == 1, (code, out, err)


if __name__ == "__main__":
    code = 0
    with TempDir() as d:
        N = Node(d, PLAN, auth=auth_block(TOKENS), token=tok("root")).start()
        try:
            run_tests([test_list_and_get_shape, test_roles_self_approval_and_approve_once,
                       test_requester_may_not_decide, test_deny_stops_the_action,
                       test_cli_approvals_approve_deny])
        except SystemExit as e:
            code = e.code
        N.stop()
    sys.exit(code)
