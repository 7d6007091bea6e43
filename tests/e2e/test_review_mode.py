"""A sandbox incident in review mode, end to end over HTTP with real tokens: the builtin
reasoner diagnoses the scenario, its remedy waits for approval, a second person approves it
through the API and the world is mitigated; denied instead, the run explains that the
mitigation was not allowed and the remedy never ran. Also: autonomous mode needs no approval.
"""

import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from harness import Node, TempDir, auth_block, run_tests, sse_events  # noqa: E402

ROOT = os.environ.get("SREH_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
SCENARIO = os.path.abspath(os.path.join(ROOT, "examples", "scenarios",
                                        "shop-checkout-bad-deploy.yaml"))
TOKENS = {"otto": ("operator", "otto-review-token"), "alice": ("approver", "alice-review-token")}
GOAL = "frontend is returning errors; find the cause and mitigate"
LABELS = {"alert": "HighErrorRate", "service": "frontend", "severity": "page"}


def node(d, mode):
    cfg = f"policy_mode: {mode}\nmodel: {{provider: builtin}}\nsandbox: {{scenario: {SCENARIO}}}\n"
    return Node(d, cfg, auth=auth_block(TOKENS), token=TOKENS["otto"][1]).start()


def submit(n):
    status, _, doc = n.json("POST", "/v1/goals", {"goal": GOAL, "labels": LABELS},
                            token=TOKENS["otto"][1])
    assert status == 201, (status, doc)
    return doc["run"]["id"]


def wait_for_approval(n, run_id):
    """Follows the run's events until it asks for approval; returns the approval id."""
    for _, kind, data in sse_events(n.port, f"/v1/runs/{run_id}/events", timeout=60,
                                    token=TOKENS["otto"][1]):
        if kind == "approval.requested":
            return json.loads(data)["data"]["approval"]
        assert kind not in ("run.succeeded", "run.failed"), f"run ended without approval: {kind}"
    raise AssertionError("the run never asked for approval")


def decide(n, approval_id, decision, comment):
    status, _, doc = n.json("POST", f"/v1/approvals/{approval_id}/decision",
                            {"decision": decision, "comment": comment},
                            token=TOKENS["alice"][1])
    assert status == 200, (status, doc)
    return doc["approval"]


def wait_end(n, run_id):
    for _ in sse_events(n.port, f"/v1/runs/{run_id}/events", timeout=60,
                        token=TOKENS["otto"][1]):
        pass
    status, _, r = n.json("GET", f"/v1/runs/{run_id}", token=TOKENS["otto"][1])
    assert status == 200
    return r


def steps(n, run_id):
    status, _, doc = n.json("GET", f"/v1/runs/{run_id}/steps", token=TOKENS["otto"][1])
    assert status == 200
    return doc["steps"]


def remedy_steps(n, run_id):
    return [s for s in steps(n, run_id) if s["tool"] == "deploy.rollback"]


def test_review_approved_through_the_api_mitigates():
    with TempDir() as d:
        n = node(d, "review")
        run_id = submit(n)
        approval = wait_for_approval(n, run_id)
        status, _, doc = n.json("GET", f"/v1/approvals/{approval}", token=TOKENS["otto"][1])
        a = doc.get("approval", doc)
        assert status == 200 and a["state"] == "pending" and a["tool"] == "deploy.rollback", a
        # The submitter may not approve its own run's action.
        status, _, doc = n.json("POST", f"/v1/approvals/{approval}/decision",
                                {"decision": "approve"}, token=TOKENS["otto"][1])
        assert status == 403, (status, doc)
        assert decide(n, approval, "approve", "go ahead")["state"] == "approved"
        r = wait_end(n, run_id)
        assert r["state"] == "succeeded", r
        rb = remedy_steps(n, run_id)
        assert len(rb) == 1 and rb[0]["state"] == "succeeded", rb
        assert rb[0]["args"]["service"] == "checkout", rb[0]
        assert "not mitigated" not in r["conclusion"], r["conclusion"]
        n.stop()


def test_review_denied_explains_mitigation_was_not_allowed():
    with TempDir() as d:
        n = node(d, "review")
        run_id = submit(n)
        approval = wait_for_approval(n, run_id)
        assert decide(n, approval, "deny", "not during the sale")["state"] == "denied"
        r = wait_end(n, run_id)
        assert r["state"] == "succeeded", r
        rb = remedy_steps(n, run_id)
        assert len(rb) == 1 and rb[0]["state"] == "failed", rb
        assert "denied by alice" in rb[0]["error"], rb[0]
        conclusion = r["conclusion"]
        assert "not mitigated" in conclusion and "denied by alice" in conclusion, conclusion
        assert "bad_deploy" in conclusion, conclusion
        n.stop()


def test_autonomous_mode_needs_no_approval():
    with TempDir() as d:
        n = node(d, "autonomous")
        run_id = submit(n)
        r = wait_end(n, run_id)
        assert r["state"] == "succeeded", r
        status, _, doc = n.json("GET", f"/v1/approvals?run={run_id}", token=TOKENS["otto"][1])
        assert status == 200 and doc["approvals"] == [], (status, doc)
        assert remedy_steps(n, run_id)[0]["state"] == "succeeded"
        n.stop()


if __name__ == "__main__":
    run_tests([test_review_approved_through_the_api_mitigates,
               test_review_denied_explains_mitigation_was_not_allowed,
               test_autonomous_mode_needs_no_approval])
