"""Crash-tested actors: the real binary with SREH_FAULT making a part throw as a bug would
(core/base/fault.hpp), and what the node does about it.

- A run's actor that dies as it starts a step is restarted by the kernel and resumes from its
  journal: the run succeeds, each mutating step happened once.
- The kernel that dies on a submit takes its runs' actors with it; its supervisor starts a new
  kernel, which recovers them from the store: they all succeed, each effect once, /v1/actors
  shows one restart, and the node takes goals again.
- A kernel that dies at every submit spends its restart budget: the node stops loudly (a
  critical line naming the budget, exit code 70) instead of looping or serving a dead kernel.
- A Work's actor that dies on a command is recovered from the store by the orchestrator: the
  command that killed it fails with a problem, the next one succeeds on the same Work.
- The model gateway failing inside a call kills the calling run's actor; the run resumes and
  its reason step is asked again.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from harness import Node, TempDir, run_tests, wait_until  # noqa: E402
from model_server import ModelServer  # noqa: E402

PLAN = """model:
  provider: scripted
  script:
    - {tool: test.record, args: {action: drain}}
    - {tool: test.echo, args: {service: checkout}}
    - {tool: test.record, args: {action: restart}}
"""
SLOW_PLAN = """model:
  provider: scripted
  script:
    - {tool: test.record, args: {action: drain}}
    - {tool: test.sleep, args: {ms: 1500}}
    - {tool: test.record, args: {action: restart}}
"""


def records(node):
    try:
        with open(node.record) as f:
            return sorted(line.strip() for line in f if line.strip())
    except FileNotFoundError:
        return []


def record_steps(node, run_id):
    return [s["n"] for s in node.steps(run_id) if s.get("tool") == "test.record"]


def check_once(node, run_ids):
    want = sorted(f"{r}:{n}" for r in run_ids for n in record_steps(node, r))
    assert len(want) == 2 * len(run_ids), want
    assert records(node) == want, f"side effects {records(node)}, wanted each of {want} once"


def kernel_row(node):
    status, _, doc = node.json("GET", "/v1/actors")
    assert status == 200, doc
    return next(a for a in doc["actors"] if a["name"] == "kernel")


def test_a_run_actor_that_dies_resumes_from_its_journal():
    # The 1st step the node starts (the run is still pending), then the 3rd (mid-way: the echo
    # between the two records).
    for point in ("run.step:1", "run.step:3"):
        with TempDir() as d:
            node = Node(d, config_extra=PLAN, env_extra={"SREH_FAULT": point}).start()
            run_id = node.submit("a run whose actor dies")
            r = node.wait_run(run_id, timeout=20)
            assert r["state"] == "succeeded", (point, r)
            check_once(node, [run_id])
            log = node.log_text()
            assert f"run {run_id} actor died" in log and "fault injected at run.step" in log, log
            assert "recovering it from the store" in log, log


def test_a_submit_whose_run_actor_dies_is_answered_at_once():
    with TempDir() as d:
        node = Node(d, config_extra=PLAN, env_extra={"SREH_FAULT": "run.create:1"}).start()
        body = {"goal": "a run whose actor dies as it is made"}
        headers = {"Idempotency-Key": "create-crash-1"}
        # Answered by the dying actor, not by the facade's 30 s timeout (timeout=10 fails that).
        status, _, doc = node.json("POST", "/v1/goals", body, headers)
        assert status == 503 and "stopped before it answered" in doc["detail"], (status, doc)
        status, _, doc = node.json("POST", "/v1/goals", body, headers)
        assert status == 201, (status, doc)
        assert node.wait_run(doc["run"]["id"])["state"] == "succeeded"


def test_a_crashed_kernel_is_restarted_and_recovers_its_runs():
    with TempDir() as d:
        node = Node(d, config_extra=SLOW_PLAN, env_extra={"SREH_FAULT": "kernel.submit:4"})
        node.start()
        runs = [node.submit(f"run {i} under way when the kernel dies") for i in range(3)]
        status, _, doc = node.json("POST", "/v1/goals", {"goal": "the submit that kills it"})
        assert status >= 500, (status, doc)
        assert doc and "detail" in doc, doc  # a problem body, not a dropped connection
        for run_id in runs:
            assert node.wait_run(run_id)["state"] == "succeeded"
        check_once(node, runs)
        row = wait_until(lambda: (lambda k: k if k["state"] == "running" else None)(
            kernel_row(node)), 10, "the kernel running again")
        assert row["restarts"] == 1 and "fault injected at kernel.submit" in row["last_error"], row
        after = node.submit("a goal after the restart")
        assert node.wait_run(after)["state"] == "succeeded"


def test_a_kernel_that_keeps_dying_stops_the_node_loudly():
    with TempDir() as d:
        node = Node(d, config_extra=PLAN, env_extra={"SREH_FAULT": "kernel.submit:1+"}).start()

        def dead():
            if node.proc.poll() is not None:
                return True
            try:
                node.request("POST", "/v1/goals", {"goal": "one more"}, timeout=5)
            except OSError:
                pass  # the node is going away
            return False
        wait_until(dead, 60, "the node to stop after its kernel spent its restart budget")
        assert node.proc.returncode == 70, node.proc.returncode
        log = node.log_text()
        assert "kernel" in log and "restart budget" in log, log
        assert "stopping the node" in log and "stopped: the kernel died more often" in log, log


TEMPLATE = """template: change-crash
kind: change
fields:
  target: {type: string, required: true}
  rollback: {type: string, default: undo it}
run: {goal: "change {target}"}
"""


def test_a_work_actor_that_dies_on_a_command_is_recovered():
    with TempDir() as d:
        tdir = os.path.join(d, "templates")
        os.makedirs(tdir)
        with open(os.path.join(tdir, "change-crash.yaml"), "w") as f:
            f.write(TEMPLATE)
        node = Node(d, config_extra=f"works:\n  templates: {tdir}\n" + PLAN,
                    env_extra={"SREH_FAULT": "works.command:1"}).start()
        status, _, doc = node.json("POST", "/v1/works",
                                   {"template": "change-crash", "fields": {"target": "db"}})
        assert status == 201, doc
        wid = doc["work"]["id"]
        status, _, doc = node.json("POST", f"/v1/works/{wid}/comment", {"text": "first"})
        assert status >= 500 and doc and "detail" in doc, (status, doc)
        status, _, doc = node.json("POST", f"/v1/works/{wid}/comment", {"text": "second"})
        assert status == 200, (status, doc)
        status, _, doc = node.json("GET", f"/v1/works/{wid}")
        texts = [e.get("data", {}).get("text") for e in doc["work"]["timeline"]
                 if e["kind"].endswith("comment")]
        assert texts == ["second"], doc["work"]["timeline"]
        assert "its actor died" in node.log_text(), node.log_text()


CONVERSATION = [
    {"text": "Checking first.", "calls": [("test_echo", '{"check": "cpu"}')]},
    {"text": "Cause found; nothing to change."},
]


def test_a_gateway_call_that_throws_is_asked_again_after_the_run_resumes():
    key = "sk-e2e-crash-0123456789"
    with TempDir() as d, ModelServer(CONVERSATION, key) as srv:
        model = (f"model:\n  provider: openai\n  base_url: {srv.url}/v1\n  model: test-model\n"
                 "  api_key: ${E2E_MODEL_KEY}\n")
        node = Node(d, config_extra=model,
                    env_extra={"E2E_MODEL_KEY": key, "SREH_FAULT": "gateway.call:2"}).start()
        run_id = node.submit("checkout is slow")
        r = node.wait_run(run_id)
        assert r["state"] == "succeeded", r
        assert "fault injected at gateway.call" in node.log_text()
        assert not srv.violations, srv.violations


if __name__ == "__main__":
    run_tests([test_a_run_actor_that_dies_resumes_from_its_journal,
               test_a_submit_whose_run_actor_dies_is_answered_at_once,
               test_a_crashed_kernel_is_restarted_and_recovers_its_runs,
               test_a_kernel_that_keeps_dying_stops_the_node_loudly,
               test_a_work_actor_that_dies_on_a_command_is_recovered,
               test_a_gateway_call_that_throws_is_asked_again_after_the_run_resumes])
