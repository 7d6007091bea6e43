"""The README's "Try it", top to bottom, on the demo config as it ships
(examples/configs/demo.yaml: review mode, the sandbox shop with a bad release of checkout),
with the CLI and the tokens the node writes into its data dir:

1. the goal: the rollback waits for the approver, then the run ends `succeeded · mitigated`;
2. `sreh sandbox reset` brings the bad release back (and says so);
3. the Work: its rollback approved, it goes mitigating → monitoring → resolved, and its timeline
   names the run's outcome;
4. `sreh sandbox reset`; a goal cancelled while it waits for its approval: nothing executed;
5. the runbook: rollback approved, the wait judged on world state observed after the rollback,
   the run `mitigated`; the runbook again on the healthy service does nothing (no approval asked,
   no second rollback);
6. a denied runbook approval is not retried: the run ends naming the denial, outcome `denied`.

At the end checkout runs its good version and is healthy.
"""

import json
import os
import re

from cluster_harness import SOURCE
from harness import Node, TempDir, run_tests, sreh_cli, wait_until

DEMO = os.path.join(SOURCE, "examples", "configs", "demo.yaml")
GOAL = "frontend is returning errors; find the cause and mitigate"


class Demo:
    def __init__(self, d):
        self.node = Node(d, config_file=DEMO, token=None)
        self.node.start()
        self.admin = open(os.path.join(self.node.data, "admin.token")).read().strip()
        self.approver = open(os.path.join(self.node.data, "approver.token")).read().strip()
        self.node.token = self.admin
        self.env = {"SREH_SERVER": f"127.0.0.1:{self.node.port}"}

    def cli(self, *args, token=None, ok=True):
        rc, out, err = sreh_cli(list(args), env_extra=self.env, token=token or self.admin,
                                timeout=120)
        if ok:
            assert rc == 0, (args, rc, out, err)
        return rc, out, err

    def pending(self, run_id):
        status, _, doc = self.node.json("GET", "/v1/approvals?state=pending")
        assert status == 200, doc
        return [a for a in doc["approvals"] if a["run_id"] == run_id]

    def approval_of(self, run_id):
        return wait_until(lambda: self.pending(run_id), 60, f"an approval of {run_id}")[0]

    def entity(self, name):
        status, _, doc = self.node.json("GET", "/v1/world")
        assert status == 200, doc
        return next((e for e in doc["entities"] if e["id"] == name), None)

    def checkout(self):
        e = self.entity("checkout")
        return (e["props"].get("version"), e["metrics"].get("error_rate")) if e else (None, None)

    def wait_checkout(self, healthy, what):
        def ok():
            version, rate = self.checkout()
            return rate is not None and ((rate < 0.01) == healthy)
        wait_until(ok, 30, what)

    def run(self, run_id):
        return self.node.run(run_id)


def test_try_it_top_to_bottom():
    with TempDir() as d:
        demo = Demo(d)
        demo.wait_checkout(False, "the bad release of checkout to show in world state")
        bad_version, _ = demo.checkout()

        # 1. The goal, approved by the second person.
        _, out, _ = demo.cli("submit", GOAL, "--label", "alert=HighErrorRate",
                             "--label", "service=frontend")
        run_id = out.split()[0]
        a = demo.approval_of(run_id)
        assert a["tool"] == "deploy.rollback", a
        demo.cli("approve", a["id"], "--comment", "rollback is safe", token=demo.approver)
        rc, watched, _ = demo.cli("watch", run_id)
        assert "succeeded · mitigated" in watched, watched
        # The rollback's time is its execution, apart from the wait for the approval.
        rollback = [s for s in demo.node.steps(run_id) if s["tool"] == "deploy.rollback"]
        assert len(rollback) == 1 and rollback[0]["executed_at"], rollback
        assert rollback[0]["started_at"] <= rollback[0]["executed_at"] <= rollback[0]["finished_at"]
        r = demo.run(run_id)
        assert (r["state"], r["outcome"]) == ("succeeded", "mitigated"), r
        demo.wait_checkout(True, "checkout to recover after the rollback")
        _, shown, _ = demo.cli("show", run_id)
        assert "mitigated" in shown.splitlines()[0], shown

        # 2. Reset: the bad release is back.
        _, out, _ = demo.cli("sandbox", "reset")
        assert "1 action(s) forgotten" in out, out
        demo.wait_checkout(False, "the reset to bring the bad release back")
        assert demo.checkout()[0] == bad_version

        # 3. The Work.
        _, out, _ = demo.cli("work", "create", "incident", "--field", "service=frontend",
                             "--field", "summary=5xx above 5%")
        work_id = re.search(r"\bwrk_\w+", out).group(0)

        def work():
            status, _, doc = demo.node.json("GET", f"/v1/works/{work_id}")
            assert status == 200, doc
            return doc["work"]
        work_run = wait_until(lambda: work()["runs"], 30, "the Work's run")[0]["id"]
        a = demo.approval_of(work_run)
        demo.cli("approve", a["id"], token=demo.approver)
        wait_until(lambda: work()["state"] == "resolved", 60, "the Work to resolve")
        _, shown, _ = demo.cli("work", "show", work_id)
        assert "mitigated" in shown, shown

        # 4. Reset, then a goal cancelled while it waits for its approval.
        demo.cli("sandbox", "reset")
        demo.wait_checkout(False, "the reset to bring the bad release back")
        _, out, _ = demo.cli("submit", GOAL, "--label", "service=frontend")
        cancelled = out.split()[0]
        demo.approval_of(cancelled)
        demo.cli("cancel", cancelled)
        wait_until(lambda: demo.run(cancelled)["state"] == "cancelled", 30, "the cancel")
        assert demo.checkout()[0] == bad_version  # nothing executed

        # 5. The runbook, approved: mitigated, judged on the world after the rollback.
        flow_run = start_flow(demo)
        a = demo.approval_of(flow_run)
        demo.cli("approve", a["id"], token=demo.approver)
        rc, watched, _ = demo.cli("watch", flow_run)
        r = demo.run(flow_run)
        assert (r["state"], r["outcome"]) == ("succeeded", "mitigated"), (r, watched)
        rollback, checks = steps_of(demo, flow_run)
        assert len(rollback) == 1 and rollback[0]["state"] == "succeeded", rollback
        held = [c for c in checks if json.loads(json.dumps(c["result"])).get("holds") is True]
        assert held, checks
        # Every check after the rollback read an observation begun after it ended: none of them
        # saw the error rate from before it.
        for c in checks:
            for value in c["result"].get("observed", {}).values():
                assert value < 0.01 or c["result"].get("unobserved"), checks
        demo.wait_checkout(True, "checkout to recover after the runbook")

        # The runbook again, on the healthy service: no approval, no second rollback.
        again = start_flow(demo)
        wait_until(lambda: demo.run(again)["state"] in ("succeeded", "failed"), 30, "the rerun")
        r = demo.run(again)
        assert (r["state"], r["outcome"]) == ("succeeded", "completed"), r
        assert steps_of(demo, again)[0] == [], "a healthy service was rolled back"
        assert not demo.pending(again)
        assert demo.checkout()[0] != bad_version

        # 6. A denied runbook approval: never retried, the run names the denial.
        demo.cli("sandbox", "reset")
        demo.wait_checkout(False, "the reset to bring the bad release back")
        denied = start_flow(demo)
        a = demo.approval_of(denied)
        demo.cli("deny", a["id"], "--comment", "not during the sale", token=demo.approver)
        wait_until(lambda: demo.run(denied)["state"] in ("succeeded", "failed"), 30,
                   "the denied runbook to end")
        r = demo.run(denied)
        assert r["outcome"] == "denied", r
        assert "denied by" in (r["error"] or r["conclusion"] or ""), r
        rollback, _ = steps_of(demo, denied)
        assert len(rollback) == 1, f"the denied rollback was tried again: {rollback}"
        assert not demo.pending(denied), "a second approval was asked"
        _, log, _ = demo.cli("show", denied)
        assert "attempt 2" not in log, log

        # The end: put checkout right for whoever comes next, as the README's last step does.
        demo.cli("sandbox", "reset")
        last = start_flow(demo)
        demo.cli("approve", demo.approval_of(last)["id"], token=demo.approver)
        wait_until(lambda: demo.run(last)["state"] == "succeeded", 60, "the last runbook")
        demo.wait_checkout(True, "checkout healthy at the end")
        demo.node.stop()
        demo.node.check_log()


def start_flow(demo):
    _, out, _ = demo.cli("flow", "run", "rollback-service", "--input", "service=checkout")
    return out.split()[0]


def steps_of(demo, run_id):
    status, _, doc = demo.node.json("GET", f"/v1/runs/{run_id}/steps")
    assert status == 200, doc
    rollback = [s for s in doc["steps"] if s["kind"] == "tool" and s["tool"] == "deploy.rollback"]
    checks = [s for s in doc["steps"]
              if s["kind"] == "observe" and isinstance(s["result"], dict) and
              "observed" in s["result"] and
              (s["decision"].get("detail", {}).get("flow", {}).get("step") == "recovered")]
    return rollback, checks


if __name__ == "__main__":
    run_tests([test_try_it_top_to_bottom])
