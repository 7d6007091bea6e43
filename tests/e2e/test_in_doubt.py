"""kill -9 between a side effect and its recorded outcome, with a tool that cannot reconcile:
after the restart the step is in doubt, an approval asks a human whether it happened, and the
action is never executed a second time without that answer. "It happened" records the outcome;
"it did not" executes it — once."""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from harness import Node, TempDir, auth_block, run_tests, sse_events  # noqa: E402

TOKENS = {"otto": ("operator", "otto-doubt-token"), "alice": ("approver", "alice-doubt-token")}
PLAN = """model:
  provider: scripted
  script:
    - {tool: test.record_blind, args: {action: failover}}
"""


def records(n):
    with open(n.record) as f:
        return [line.strip() for line in f if line.strip()]


def crash_after_effect(d):
    n = Node(d, PLAN, auth=auth_block(TOKENS), token=TOKENS["otto"][1])
    n.start(env_extra={"SREH_FAILPOINT": "after_effect:1"})
    try:
        n.submit("in doubt", key="doubt-1")
    except (OSError, AssertionError, ValueError):
        pass  # the crash may eat the response
    assert n.wait_exit(timeout=30) == -9, n.log_text()
    n.start()
    run_id = n.submit("in doubt", key="doubt-1")
    assert len(records(n)) == 1  # the effect happened once, before the crash
    for _, kind, data in sse_events(n.port, f"/v1/runs/{run_id}/events", timeout=30,
                                    token=TOKENS["otto"][1]):
        if kind == "approval.requested":
            doc = json.loads(data)["data"]
            assert doc["kind"] == "in_doubt", doc
            return n, run_id, doc["approval"]
    raise AssertionError("no in-doubt approval was requested")


def decide(n, approval, decision):
    status, _, doc = n.json("POST", f"/v1/approvals/{approval}/decision",
                            {"decision": decision, "comment": "checked the target"},
                            token=TOKENS["alice"][1])
    assert status == 200, (status, doc)


def test_in_doubt_confirmed_happened_is_not_repeated():
    with TempDir() as d:
        n, run_id, approval = crash_after_effect(d)
        assert n.run(run_id)["state"] == "waiting"
        decide(n, approval, "happened")
        r = n.wait_run(run_id, states=("succeeded",))
        assert len(records(n)) == 1, records(n)
        assert n.steps(run_id)[0]["state"] == "succeeded"
        assert r["state"] == "succeeded"
        n.stop()


def test_in_doubt_not_happened_executes_once():
    with TempDir() as d:
        n, run_id, approval = crash_after_effect(d)
        decide(n, approval, "not_happened")
        n.wait_run(run_id, states=("succeeded",))
        assert len(records(n)) == 2, records(n)  # the crash's effect + the one execution now
        assert n.steps(run_id)[0]["attempts"] == 2
        n.stop()


if __name__ == "__main__":
    run_tests([test_in_doubt_confirmed_happened_is_not_repeated,
               test_in_doubt_not_happened_executes_once])
