"""Running flows on a real node (docs/flows.md, "Running a flow").

- Each example runbook of examples/flows runs on the sandbox scenario of its fault kind, its
  durations shortened by the test (the file is otherwise the example): the run ends as the
  runbook says, its steps are journaled with keys of the flow run and step, and the world shows
  the change (the entity's history names the flow run that made it).
- gpu-host-drain waits for a second person's approval and runs its parallel branches as runs
  of their own (kind flow, parent the flow run).
- POST /v1/flows/{name}/runs refuses bad input with a problem naming it, and changes nothing;
  an Idempotency-Key repeated with the same inputs names the same run, with other inputs is 422.
- `sreh flow run NAME --input k=v --watch` runs one and shows its timeline with the branches.
- Cancelling a flow run waiting for an approval ends it; nothing after the approval starts
  (cancelling one waiting for its branches: tests/unit/kernel/kernel_flows.cpp).
- Kill -9 at every step boundary of a flow with a parallel block, an approval and waits: after
  the restart it finishes and each mutating step took effect exactly once (the testkit's
  fsync'd record of idempotency keys, and the journal).
"""

import json
import os
import re

from harness import Node, TempDir, auth_block, run_tests, sreh_cli, sse_events
from cluster_harness import SOURCE

EXAMPLES = os.path.join(SOURCE, "examples", "flows")
SCENARIOS = os.path.join(SOURCE, "examples", "scenarios")
SRE, SRE_TOKEN = "sre", "sre-token-0123456789abcdef"
LEAD, LEAD_TOKEN = "lead", "lead-token-0123456789abcdef"
AUTH = auth_block({SRE: ("admin", SRE_TOKEN), LEAD: ("admin", LEAD_TOKEN)})
TERMINAL = ("succeeded", "failed", "cancelled")


def fast_flows(d):
    """The example flows with minutes as seconds, waits checked every second."""
    out = os.path.join(d, "flows")
    os.makedirs(out)
    for name in os.listdir(EXAMPLES):
        text = open(os.path.join(EXAMPLES, name)).read()
        text = re.sub(r"\b(\d+)m\b", r"\1s", text)
        text = re.sub(r"\b(\d+)h\b", r"\1s", text)
        text = text.replace("every: 30s", "every: 1s")
        text = re.sub(r"initial: \d+s", "initial: 1s", text)
        open(os.path.join(out, name), "w").write(text)
    return out


def sandbox_node(d, scenario, extra=""):
    return Node(d, auth=AUTH, token=SRE_TOKEN,
                config_extra=f"flows: {fast_flows(d)}\nsandbox:\n  scenario: "
                             f"{os.path.join(SCENARIOS, scenario + '.yaml')}\n{extra}")


def start(node, flow, inputs, key=None):
    headers = {"Idempotency-Key": key} if key else None
    status, _, doc = node.json("POST", f"/v1/flows/{flow}/runs", {"inputs": inputs},
                               headers=headers)
    assert status == 201, (status, doc)
    assert doc["run"]["kind"] == "flow" and doc["run"]["flow"]["name"] == flow, doc
    return doc["run"]["id"]


def approve_pending(node, run_ids):
    status, _, doc = node.json("GET", "/v1/approvals?state=pending")
    assert status == 200, doc
    n = 0
    for a in doc["approvals"]:
        if a["run_id"] in run_ids:
            status, _, out = node.json("POST", f"/v1/approvals/{a['id']}/decision",
                                       {"decision": "approve"}, token=LEAD_TOKEN)
            assert status == 200, out
            n += 1
    return n


def children(node, parent):
    status, _, doc = node.json("GET", "/v1/runs?limit=500")
    assert status == 200, doc
    return [r for r in doc["runs"] if r["parent"] == parent]


def flow_steps(node, run_id):
    """Each journaled step as (kind, flow step, phase, state)."""
    out = []
    for s in node.steps(run_id):
        f = (s["decision"] or {}).get("detail", {}) if isinstance(s["decision"], dict) else {}
        f = f.get("flow", {}) if isinstance(f, dict) else {}
        out.append((s["kind"], f.get("step"), f.get("phase"), s["state"]))
    return out


def wait_end(node, run_id, approve=False, timeout=40):
    """Follows the run's stream (from its start) to its end, approving what it asks for when
    `approve`."""
    for _, kind, _ in sse_events(node.port, f"/v1/runs/{run_id}/events", timeout=timeout,
                                 token=SRE_TOKEN):
        if approve and kind == "approval.requested":
            approve_pending(node, {run_id})
        if kind in ("run.succeeded", "run.failed", "run.cancelled"):
            break
    status, _, doc = node.json("GET", f"/v1/runs/{run_id}")
    assert status == 200, doc
    return doc


def changed_by(node, entity):
    status, _, doc = node.json("GET", f"/v1/world/entities/{entity}")
    assert status == 200, doc
    return [v.get("changed_by", "") for v in doc["history"]]


def test_rollback_runbook_on_a_bad_deploy():
    with TempDir() as d:
        node = sandbox_node(d, "shop-checkout-bad-deploy").start()
        run_id = start(node, "rollback-service", {"service": "checkout"})
        r = wait_end(node, run_id)
        assert r["state"] == "succeeded", r
        steps = flow_steps(node, run_id)
        assert steps[0] == ("tool", "before", "run", "succeeded"), steps
        assert steps[1] == ("observe", "healthy", "check", "succeeded"), steps  # not healthy
        assert steps[2] == ("tool", "rollback", "run", "succeeded"), steps
        assert ("observe", "recovered", "check", "succeeded") in steps, steps
        assert all(s[1] != "investigate" for s in steps), steps  # recovered: no goal run
        assert r["outcome"] == "mitigated", r
        raw = node.steps(run_id)
        assert raw[2]["idempotency_key"] == f"{run_id}/rollback", raw[2]
        assert raw[2]["result"]["after"]["version"] == "v2.4.0", raw[2]
        assert any(c.startswith(run_id) for c in changed_by(node, "checkout")), \
            changed_by(node, "checkout")
        node.stop()


def test_gpu_drain_runbook_with_approval_and_parallel_branches():
    with TempDir() as d:
        node = sandbox_node(d, "gpu-xid-train-llm").start()
        run_id = start(node, "gpu-host-drain", {"host": "gpu-3", "job": "train-llm"})
        r = wait_end(node, run_id, approve=True)
        assert r["state"] == "succeeded", r
        kinds = [(k, s) for k, s, _, _ in flow_steps(node, run_id)]
        assert kinds[:5] == [("tool", "inspect"), ("approval", "approve"), ("tool", "cordon"),
                             ("subruns", "move"), ("tool", "drain")], kinds
        approval = node.steps(run_id)[1]
        assert approval["result"] == {"approved_by": LEAD}, approval
        branches = children(node, run_id)
        assert sorted(b["flow"]["branch"] for b in branches) == ["evidence", "restart"], branches
        assert all(b["kind"] == "flow" and b["state"] == "succeeded" for b in branches), branches
        restart = [b for b in branches if b["flow"]["branch"] == "restart"][0]
        assert node.steps(restart["id"])[0]["idempotency_key"] == f"{restart['id']}/restart-job"
        assert any(c.startswith(run_id) for c in changed_by(node, "gpu-3")), \
            changed_by(node, "gpu-3")
        assert any(c.startswith(restart["id"]) for c in changed_by(node, "train-llm")), \
            changed_by(node, "train-llm")
        node.stop()


def test_disk_cleanup_runbook_waits_until_the_disk_is_free():
    with TempDir() as d:
        node = sandbox_node(d, "shop-node-c-disk-full").start()
        run_id = start(node, "disk-cleanup", {"host": "node-c"})
        r = wait_end(node, run_id)
        assert r["state"] == "succeeded", r
        steps = node.steps(run_id)
        assert steps[1]["result"]["then"] == "cleanup", steps[1]
        checks = [s for s in steps if s["kind"] == "observe" and
                  s["decision"]["detail"]["flow"]["step"] == "freed"]
        assert checks and checks[-1]["result"]["holds"] is True, checks
        assert all("page" != s["decision"]["detail"]["flow"]["step"]
                   for s in steps if s["kind"] != "conclude"), steps
        node.stop()


def test_cert_rotation_runbook():
    with TempDir() as d:
        node = sandbox_node(d, "shop-payments-cert-expired").start()
        run_id = start(node, "cert-rotation", {"service": "payments"})
        r = wait_end(node, run_id)
        assert r["state"] == "succeeded", r
        kinds = [(k, s) for k, s, _, _ in flow_steps(node, run_id)]
        assert ("tool", "rotate") in kinds and ("timer", "settle") in kinds, kinds
        assert ("tool", "restart") not in kinds, kinds  # the handshakes recovered
        node.stop()


def test_bad_inputs_are_refused_and_change_nothing():
    with TempDir() as d:
        node = sandbox_node(d, "shop-checkout-bad-deploy").start()
        cases = [
            ("/v1/flows/nope/runs", {"inputs": {}}, 404, "no flow 'nope'"),
            ("/v1/flows/rollback-service/runs", {"inputs": {}}, 400, "inputs.service"),
            ("/v1/flows/rollback-service/runs", {"inputs": {"service": 3}}, 400,
             "inputs.service: expected a string, got number"),
            ("/v1/flows/rollback-service/runs",
             {"inputs": {"service": "checkout", "max_error_rate": "low"}}, 400,
             "inputs.max_error_rate"),
            ("/v1/flows/rollback-service/runs", {"inputs": {"service": "x", "extra": 1}}, 400,
             "extra"),
            ("/v1/flows/rollback-service/runs", {"inputs": [1]}, 400, "field 'inputs'"),
            ("/v1/flows/rollback-service/runs", {"input": {}}, 400, "field 'input'"),
            ("/v1/flows/rollback-service/runs", {"inputs": {"service": "x"}, "labels": {"a": 1}},
             400, "labels.a"),
        ]
        for path, body, want, text in cases:
            status, _, doc = node.json("POST", path, body)
            assert status == want and text in doc.get("detail", ""), (path, body, status, doc)
        status, _, doc = node.json("POST", "/v1/flows/rollback-service/runs", None,
                                   headers={"Content-Type": "application/json"})
        assert status == 400, doc  # no body: the required input is missing
        status, _, runs = node.json("GET", "/v1/runs")
        assert runs["runs"] == [], runs
        # One key, one run: the same inputs name it again, other inputs are refused.
        first = start(node, "rollback-service", {"service": "checkout"}, key="k-1")
        status, _, doc = node.json("POST", "/v1/flows/rollback-service/runs",
                                   {"inputs": {"service": "checkout"}},
                                   headers={"Idempotency-Key": "k-1"})
        assert status == 200 and doc["run"]["id"] == first, (status, doc)
        status, _, doc = node.json("POST", "/v1/flows/rollback-service/runs",
                                   {"inputs": {"service": "payments"}},
                                   headers={"Idempotency-Key": "k-1"})
        assert status == 422 and first in doc["detail"], (status, doc)
        node.stop()


def test_cli_runs_a_flow_and_watches_its_branches():
    with TempDir() as d:
        node = sandbox_node(d, "gpu-xid-train-llm").start()
        env = {"SREH_SERVER": f"127.0.0.1:{node.port}"}
        rc, out, err = sreh_cli(["flow", "run", "disk-cleanup", "--input", "host=gpu-3",
                                 "--input", "below=0.9", "--watch"], env_extra=env,
                                token=SRE_TOKEN)
        assert rc == 0, out + err
        assert "flow disk-cleanup finished" in out and "✔ succeeded" in out, out
        rc, shown, err = sreh_cli(["show", out.splitlines()[0]], env_extra=env, token=SRE_TOKEN)
        assert rc == 0 and "disk-cleanup (version " in shown, shown + err
        assert '"below":0.9' in shown and '"host":"gpu-3"' in shown, shown
        rc, out, err = sreh_cli(["flow", "run", "disk-cleanup", "--input", "below=lots"],
                                env_extra=env, token=SRE_TOKEN)
        assert rc != 0 and "below: expected a number" in err, err
        rc, out, err = sreh_cli(["flow", "run", "gpu-host-drain", "--input", "host=gpu-3"],
                                env_extra=env, token=SRE_TOKEN)
        assert rc != 0 and "inputs.job" in err, out + err
        node.stop()


def test_cancelling_a_flow_waiting_for_an_approval_starts_nothing():
    with TempDir() as d:
        node = sandbox_node(d, "gpu-xid-train-llm").start()
        run_id = start(node, "gpu-host-drain", {"host": "gpu-3", "job": "train-llm"})
        # Cancel while it waits for the approval: nothing else runs.
        status, _, doc = node.json("POST", f"/v1/runs/{run_id}/cancel", {})
        assert status == 200 and doc["run"]["state"] == "cancelled", doc
        assert children(node, run_id) == []
        node.stop()


ROLLBACK_TEMPLATE = """template: rollback
kind: maintenance
title: "roll back {service}"
fields:
  service: {type: string, required: true}
  max_errors: {type: number, default: 0.01}
run:
  flow: rollback-service
  inputs: {service: "{service}", max_error_rate: "{max_errors}"}
"""


def test_a_work_template_runs_a_flow():
    with TempDir() as d:
        tdir = os.path.join(d, "templates")
        os.makedirs(tdir)
        open(os.path.join(tdir, "rollback.yaml"), "w").write(ROLLBACK_TEMPLATE)
        node = sandbox_node(d, "shop-checkout-bad-deploy",
                            f"works:\n  templates: {tdir}\n  check_every: 1s\n").start()
        status, _, doc = node.json("POST", "/v1/works",
                                   {"template": "rollback", "fields": {"service": "checkout"}})
        assert status == 201, doc
        work_id = doc["work"]["id"]
        run_id = None
        try:
            for _, kind, data in sse_events(node.port, "/v1/events", last_event_id=0, timeout=10,
                                            token=SRE_TOKEN):
                ev = json.loads(data)
                if kind == "run.created" and ev["data"].get("kind") == "flow":
                    run_id = ev["run_id"]
                    break
        except (AssertionError, OSError):
            pass
        assert run_id, ("the Work started no flow run", node.json("GET", f"/v1/works/{work_id}"))
        r = wait_end(node, run_id)
        assert r["state"] == "succeeded" and r["flow"]["name"] == "rollback-service", r
        assert r["flow"]["inputs"] == {"service": "checkout", "max_error_rate": 0.01}, r
        status, _, w = node.json("GET", f"/v1/works/{work_id}")
        assert status == 200 and run_id in json.dumps(w), w
        node.stop()


def test_a_template_naming_no_flow_is_refused_at_start():
    with TempDir() as d:
        tdir = os.path.join(d, "templates")
        os.makedirs(tdir)
        open(os.path.join(tdir, "rollback.yaml"), "w").write(
            ROLLBACK_TEMPLATE.replace("rollback-service", "roll-back"))
        node = sandbox_node(d, "shop-checkout-bad-deploy", f"works:\n  templates: {tdir}\n")
        out = node.start_fails()
        assert "rollback.yaml:8:" in out and "run.flow: no flow 'roll-back'" in out, out


def test_the_reasoner_starts_a_flow_with_flow_run():
    with TempDir() as d:
        script = ("model:\n  provider: scripted\n  script:\n    - {tool: flow.run, args: "
                  "{flow: disk-cleanup, inputs: {host: node-c}}}\n")
        node = sandbox_node(d, "shop-node-c-disk-full", script).start()
        status, _, doc = node.json("POST", "/v1/goals", {"goal": "node-c is full"},
                                   headers={"Idempotency-Key": "g-1"})
        assert status == 201, doc
        goal = wait_end(node, doc["run"]["id"])
        assert goal["state"] == "succeeded", goal
        step = node.steps(goal["id"])[0]
        assert step["tool"] == "flow.run" and step["state"] == "succeeded", step
        kids = children(node, goal["id"])
        assert len(kids) == 1 and kids[0]["id"] == step["result"]["run"], (kids, step)
        assert kids[0]["idempotency_key"] == step["idempotency_key"], kids
        assert wait_end(node, kids[0]["id"])["state"] == "succeeded"
        node.stop()


CRASH_FLOW = """flow: crash
steps:
  - {id: drain, tool: test.record, args: {action: drain}}
  - id: ok
    approval: {approvers: 1, roles: [admin]}
  - id: both
    parallel:
      branches:
        a: [{id: restart, tool: test.record, args: {action: restart}}]
        b:
          - {id: look, tool: test.echo, args: {check: 1}}
          - {id: pause, wait: 1s}
  - {id: settle, wait: 1s}
  - {id: scale, tool: test.record, args: {action: scale}}
"""


TIMEOUT_FLOW = """flow: slow
steps:
  - id: slow
    tool: test.sleep
    args: {ms: 60000}
    timeout: 1s
    retries: {max: 1, backoff: {initial: 1s}}
    on_failure: continue
  - {id: after, tool: test.echo, args: {slow: "${steps.slow.status}"}}
"""


def test_a_tool_step_that_takes_longer_than_its_timeout_is_stopped_and_retried():
    with TempDir() as d:
        node = crash_node(d).start()
        run_id = start(node, "slow", {})
        r = wait_end(node, run_id, timeout=30)
        assert r["state"] == "succeeded", r
        steps = node.steps(run_id)
        slow = [s for s in steps if s["tool"] == "test.sleep"]
        assert len(slow) == 2, steps
        for s in slow:
            assert s["state"] == "failed", s
            assert s["error"] == "timed out after 1 s (test.sleep: cancelled)", s
        assert slow[1]["idempotency_key"] == f"{run_id}/slow#2", slow[1]
        assert steps[-2]["args"] == {"slow": "failed"}, steps[-2]
        node.stop()


def crash_node(d):
    fdir = os.path.join(d, "flows")
    os.makedirs(fdir, exist_ok=True)
    open(os.path.join(fdir, "crash.yaml"), "w").write(CRASH_FLOW)
    open(os.path.join(fdir, "slow.yaml"), "w").write(TIMEOUT_FLOW)
    return Node(d, auth=AUTH, token=SRE_TOKEN, config_extra=f"flows: {fdir}\n")


def crash_at(point, n):
    with TempDir() as d:
        node = crash_node(d)
        node.start(env_extra={"SREH_FAILPOINT": f"{point}:{n}"})
        key = f"crash-{point}-{n}"
        run_id = None
        died = False
        try:
            run_id = start(node, "crash", {}, key=key)
            wait_end(node, run_id, approve=True, timeout=20)
        except (OSError, AssertionError, ValueError):
            died = True  # the node died under us (it may not be reaped yet)
        rc = node.wait_exit(timeout=10) if died else node.proc.poll()
        crashed = rc is not None
        if crashed:
            assert rc == -9, f"{point}:{n}: node exited {rc}\n{node.log_text()[-2000:]}"
            node.start()  # no failpoint: recovers every run from the store
        elif run_id is None:
            raise AssertionError(f"{point}:{n}: the node lives but the run did not start")
        run_id = start_again(node, key)
        r = wait_end(node, run_id, approve=True)
        assert r["state"] == "succeeded", (point, n, r, node.log_text()[-2000:])
        branches = children(node, run_id)
        a = [b for b in branches if b["flow"]["branch"] == "a"]
        assert len(branches) == 2 and len(a) == 1, (point, n, branches)
        with open(node.record) as f:
            lines = sorted(line.strip() for line in f if line.strip())
        want = sorted([f"{run_id}/drain", f"{a[0]['id']}/restart", f"{run_id}/scale"])
        assert lines == want, f"{point}:{n}: effects {lines}, wanted each of {want} once"
        steps = flow_steps(node, run_id)
        acts = [s for s in steps if s[0] == "tool"]
        assert [s[1] for s in acts] == ["drain", "scale"], (point, n, steps)
        assert all(s[3] == "succeeded" for s in steps), (point, n, steps)
        node.stop()
        return crashed


def start_again(node, key):
    status, _, doc = node.json("POST", "/v1/flows/crash/runs", {"inputs": {}},
                               headers={"Idempotency-Key": key})
    assert status in (200, 201), (status, doc)
    return doc["run"]["id"]


CRASHED = []


def make_crash_case(point, n):
    def case():
        if crash_at(point, n):
            CRASHED.append(f"{point}:{n}")
    case.__name__ = f"kill9_{point}_step{n}"
    return case


CRASH_CASES = [make_crash_case(p, n) for p in ("after_intent", "after_effect", "after_outcome")
               for n in (1, 2, 3, 4, 5)]


def test_the_failpoints_killed_the_node_at_each_boundary_there_is():
    # Tool intents and effects are steps 1 (drain, restart, look) and 5 (scale); every step
    # kind commits an outcome. A failpoint a step never meets leaves the node alive.
    want = ["after_intent:1", "after_intent:5", "after_effect:1", "after_effect:5"] + \
        [f"after_outcome:{n}" for n in (1, 2, 3, 4, 5)]
    assert sorted(CRASHED) == sorted(want), CRASHED


if __name__ == "__main__":
    run_tests([test_rollback_runbook_on_a_bad_deploy,
               test_gpu_drain_runbook_with_approval_and_parallel_branches,
               test_disk_cleanup_runbook_waits_until_the_disk_is_free,
               test_cert_rotation_runbook,
               test_bad_inputs_are_refused_and_change_nothing,
               test_cli_runs_a_flow_and_watches_its_branches,
               test_cancelling_a_flow_waiting_for_an_approval_starts_nothing,
               test_a_work_template_runs_a_flow,
               test_a_template_naming_no_flow_is_refused_at_start,
               test_the_reasoner_starts_a_flow_with_flow_run,
               test_a_tool_step_that_takes_longer_than_its_timeout_is_stopped_and_retried] +
              CRASH_CASES +
              [test_the_failpoints_killed_the_node_at_each_boundary_there_is])
