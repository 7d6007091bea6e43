"""Forks: a new run that starts with a finished run's recorded steps 1..N-1 and goes on live from
step N, under a policy of its own or with an amended tool result (docs/fork.md).

Shows: the sandbox incident (a bad checkout release) solved autonomously, then forked under a
stricter policy: the fork's copied steps are the original's, it diverges at the first mutating
step (the rollback now waits for a person) and `GET /v1/runs/{fork}/compare` says so; the
original is untouched. A fork's own policy survives kill -9 of the node while the fork waits:
after the restart it is still the fork's, the approval lets the rollback run, the fork ends.
`sreh fork --policy FILE --wait` with a policy that denies rollbacks ends and prints where it
diverged. An amended tool result is what the fork's step holds, named in the comparison. A
fork is a counterfactual: its postmortem is not written into long-term memory. (A fork goes on
live in the world as it is now: the tests put the sandbox's faults back before forking.) Bad input: an
unfinished run, step 0, a step past the last, an unknown run, an edit of a step the fork does
not copy, a policy that does not load, a model route, a malformed body, a viewer: each a clear
4xx naming the problem, and no run created.
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from harness import (Node, TempDir, auth_block, run_tests, sreh_cli, sse_events,  # noqa: E402
                     wait_until)

ROOT = os.environ.get("SREH_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
SCENARIO = os.path.abspath(os.path.join(ROOT, "examples", "scenarios",
                                        "shop-checkout-bad-deploy.yaml"))
TOKENS = {"otto": ("operator", "otto-fork-token"), "alice": ("approver", "alice-fork-token"),
          "vera": ("viewer", "vera-fork-token")}
GOAL = "frontend is returning errors; find the cause and mitigate"
REVIEW = "mode: review\n"
NO_ROLLBACKS = ("mode: autonomous\nrules:\n  - id: no-rollbacks\n    when: {tools: "
                "[deploy.rollback]}\n    effect: deny\n    reason: rollbacks are frozen\n")


def start(d, mode="autonomous"):
    cfg = f"policy_mode: {mode}\nmodel: {{provider: builtin}}\nsandbox: {{scenario: {SCENARIO}}}\n"
    return Node(d, cfg, env_extra={"SREH_FORK_SECRET": "fork-env-secret-7f3a"},
                auth=auth_block(TOKENS), token=TOKENS["otto"][1], testkit=False).start()


def solved(n):
    status, _, doc = n.json("POST", "/v1/goals", {"goal": GOAL, "labels": {"service": "frontend"}})
    assert status == 201, (status, doc)
    run_id = doc["run"]["id"]
    r = n.wait_run(run_id, timeout=60)
    assert r["state"] == "succeeded", r
    steps = n.steps(run_id)
    tools = [s["tool"] for s in steps]
    assert "deploy.rollback" in tools, tools
    return run_id, steps


def reset_world(n):
    """The sandbox with its faults back: a fork goes on live in the world as it is now, which
    the original's rollback has mended."""
    status, _, doc = n.json("POST", "/sandbox/reset", {})
    assert status == 200, (status, doc)


def mutating_steps(steps):
    return [s["n"] for s in steps if s["kind"] == "tool" and s["tool"] == "deploy.rollback"]


def fork(n, run_id, body, token=...):
    return n.json("POST", f"/v1/runs/{run_id}/fork", body, token=token)


def compare(n, fork_id):
    status, _, doc = n.json("GET", f"/v1/runs/{fork_id}/compare")
    assert status == 200, (status, doc)
    return doc


def approval_of(n, run_id):
    status, _, doc = n.json("GET", f"/v1/approvals?run={run_id}&state=pending")
    assert status == 200, (status, doc)
    return doc["approvals"]


def memories_of(n, run_id):
    status, _, doc = n.json("GET", f"/v1/memory?label=run={run_id}&kind=postmortem")
    assert status == 200, (status, doc)
    return doc["memories"]


def run_count(n):
    status, _, doc = n.json("GET", "/v1/runs?limit=500")
    assert status == 200
    return len(doc["runs"])


def test_stricter_policy_diverges_at_the_first_mutating_step():
    with TempDir() as d:
        n = start(d)
        run_id, steps = solved(n)
        rollback_n = mutating_steps(steps)[0]
        assert rollback_n > 2, steps
        reset_world(n)
        status, hdrs, doc = fork(n, run_id, {"from_step": 2, "config": {"policy": REVIEW}})
        assert status == 201, (status, doc)
        f = doc["run"]
        assert f["forked_from"] == run_id and f["fork"]["from_step"] == 2, f
        assert f["fork"]["policy"] == "own" and f["goal"] == GOAL, f
        assert hdrs["location"] == f"/v1/runs/{f['id']}"
        # It runs live from step 2 and parks at the rollback: review mode asks a person.
        wait_until(lambda: n.run(f["id"])["state"] == "waiting", 60, "the fork to park")
        fs = n.steps(f["id"])
        assert fs[0]["tool"] == steps[0]["tool"] and fs[0]["result"] == steps[0]["result"]
        assert fs[0]["idempotency_key"] == f"{f['id']}:1", fs[0]
        assert fs[-1]["n"] == rollback_n and fs[-1]["tool"] == "deploy.rollback", fs[-1]
        assert fs[-1]["decision"]["policy"]["effect"] == "require_approval", fs[-1]["decision"]
        c = compare(n, f["id"])
        assert c["original"] == run_id and c["from_step"] == 2, c
        assert c["first_divergence"] == rollback_n, json.dumps(c, indent=1)
        diff = c["steps"][rollback_n - 1]
        assert not diff["same"] and diff["difference"].startswith(
            "policy: original allow"), diff
        assert "fork require_approval" in diff["difference"], diff
        assert all(s["same"] for s in c["steps"][:rollback_n - 1]), c["steps"]
        assert c["fork_end"] is None and c["original_end"].startswith("succeeded"), c
        # The original is untouched.
        assert n.steps(run_id) == steps
        assert "forked_from" not in n.run(run_id)
        # Its own policy is pinned in the store: kill -9 now, restart, and the fork still waits
        # under it; a person approves, the rollback runs, the fork ends.
        n.kill9()
        n.start()
        assert n.run(f["id"])["state"] == "waiting"
        pending = approval_of(n, f["id"])
        assert len(pending) == 1 and pending[0]["step"] == rollback_n, pending
        status, _, doc = n.json("POST", f"/v1/approvals/{pending[0]['id']}/decision",
                                {"decision": "approve", "comment": "fork: go ahead"},
                                token=TOKENS["alice"][1])
        assert status == 200, (status, doc)
        r = n.wait_run(f["id"], timeout=60)
        assert r["state"] == "succeeded", r
        c = compare(n, f["id"])
        assert c["first_divergence"] == rollback_n and c["fork_end"].startswith("succeeded"), c
        # A counterfactual teaches nothing: memory holds the original's postmortem, not the
        # fork's. (A later real incident's postmortem is written after the fork ended: once it
        # is there, the fork's would be too.)
        wait_until(lambda: memories_of(n, run_id), 20, "the original's postmortem in memory")
        reset_world(n)
        later, _ = solved(n)
        wait_until(lambda: memories_of(n, later), 20, "the later run's postmortem in memory")
        assert memories_of(n, f["id"]) == []
        n.stop()


def test_cli_fork_with_a_denying_policy_waits_and_compares():
    with TempDir() as d:
        n = start(d)
        run_id, steps = solved(n)
        rollback_n = mutating_steps(steps)[0]
        policy = os.path.join(d, "no-rollbacks.yaml")
        with open(policy, "w") as f:
            f.write(NO_ROLLBACKS)
        server = ["--server", f"127.0.0.1:{n.port}"]
        reset_world(n)
        rc, out, err = sreh_cli(["fork", run_id, "--from", "2", "--policy", policy, "--wait",
                                 *server], token=TOKENS["otto"][1], timeout=120)
        assert rc in (0, 1), (rc, out, err)
        fork_id = out.split()[0]
        assert fork_id.startswith("run_"), out
        assert f"diverged at step {rollback_n}" in out, out
        assert "policy: original allow" in out and "fork deny (no-rollbacks)" in out, out
        fs = n.steps(fork_id)
        denied = fs[rollback_n - 1]
        assert denied["tool"] == "deploy.rollback" and denied["state"] == "failed", denied
        assert "denied by policy" in denied["error"], denied
        # sreh show names the origin; sreh compare prints the same table again.
        rc, out, err = sreh_cli(["show", fork_id, *server], token=TOKENS["vera"][1])
        assert rc == 0 and f"{run_id} at step 2, its own policy" in out, (rc, out, err)
        rc, out, err = sreh_cli(["compare", fork_id, *server], token=TOKENS["vera"][1])
        assert rc == 0 and f"diverged at step {rollback_n}" in out, (rc, out, err)
        n.stop()


def test_amended_tool_result_is_the_forks():
    with TempDir() as d:
        n = start(d)
        run_id, steps = solved(n)
        deploys = next(s for s in steps if s["tool"] == "deploys.list")
        amended = {"service": "checkout", "deploys": []}
        status, _, doc = fork(n, run_id, {"from_step": deploys["n"] + 1,
                                          "edits": [{"step": deploys["n"], "result": amended}]})
        assert status == 201, (status, doc)
        f = doc["run"]
        assert f["fork"]["edited_steps"] == [deploys["n"]], f
        r = n.wait_run(f["id"], timeout=60)
        assert r["state"] in ("succeeded", "failed"), r
        fs = n.steps(f["id"])
        assert fs[deploys["n"] - 1]["result"] == amended, fs[deploys["n"] - 1]
        c = compare(n, f["id"])
        assert c["first_divergence"] == deploys["n"], json.dumps(c, indent=1)
        assert c["steps"][deploys["n"] - 1]["difference"] == "the result differs", c
        n.stop()


def test_refusals_name_the_problem_and_create_nothing():
    with TempDir() as d:
        n = start(d, mode="review")  # the rollback waits: an unfinished run to refuse
        status, _, doc = n.json("POST", "/v1/goals", {"goal": GOAL})
        assert status == 201
        waiting = doc["run"]["id"]
        wait_until(lambda: n.run(waiting)["state"] == "waiting", 60, "the run to park")
        status, _, doc = n.json("POST", f"/v1/runs/{waiting}/cancel", {})
        assert status == 200, (status, doc)
        n.wait_run(waiting, timeout=30)
        last = n.run(waiting)["steps"]
        before = run_count(n)
        cases = [
            (waiting, {"from_step": 0}, 400, "from_step: 0 is not a step"),
            (waiting, {"from_step": last + 1}, 400,
             f"from_step: run {waiting} has {last} steps, so the fork can start from step 1 "
             f"to {last}, not {last + 1}"),
            (waiting, {}, 400, "from_step: missing"),
            (waiting, {"from_step": "2"}, 400, "from_step: expected an integer, got string"),
            (waiting, {"from_step": 2, "frobnicate": 1}, 400, "unknown field 'frobnicate'"),
            (waiting, {"from_step": 2, "edits": [{"step": 2, "result": {}}]}, 400,
             "edits[0].step: 2 is not a recorded step the fork starts with (1 to 1)"),
            (waiting, {"from_step": 2, "edits": [{"step": 1}]}, 400,
             "edits[0]: give either a result"),
            (waiting, {"from_step": 2, "config": {"policy": "mode: reckless\n"}}, 400,
             "the fork's policy does not load: config.policy:1:"),
            (waiting, {"from_step": 2, "config": {"model": {"provider": "openai"}}}, 400,
             "config.model: a fork reasons with versions the node knows"),
            ("run_01JZZZZZZZZZZZZZZZZZZZZZZZ", {"from_step": 1}, 404,
             "run run_01JZZZZZZZZZZZZZZZZZZZZZZZ not found"),
            ("run_nope", {"from_step": 1}, 400, "run id 'run_nope' is malformed"),
        ]
        for run_id, body, want, text in cases:
            status, _, doc = fork(n, run_id, body)
            assert status == want and text in doc["detail"], (body, status, doc)
        # A policy from a request never reads the node's environment.
        secret = "fork-env-secret-7f3a"
        status, _, doc = fork(n, waiting, {"from_step": 1,
                                           "config": {"policy": "mode: ${SREH_FORK_SECRET}\n"}})
        assert status == 400 and secret not in json.dumps(doc), (status, doc)
        status, _, data = n.request("POST", f"/v1/runs/{waiting}/fork", b"{not json",
                                    {"Content-Type": "application/json"})
        assert status == 400, (status, data)
        status, _, doc = fork(n, waiting, {"from_step": 1}, token=TOKENS["vera"][1])
        assert status == 403, (status, doc)
        assert run_count(n) == before
        status, _, doc = n.json("GET", f"/v1/runs/{waiting}/compare")
        assert status == 400 and "is not a fork" in doc["detail"], (status, doc)
        n.stop()


def test_an_unfinished_run_is_refused():
    with TempDir() as d:
        n = start(d, mode="review")
        status, _, doc = n.json("POST", "/v1/goals", {"goal": GOAL})
        run_id = doc["run"]["id"]
        wait_until(lambda: n.run(run_id)["state"] == "waiting", 60, "the run to park")
        before = run_count(n)
        status, _, doc = fork(n, run_id, {"from_step": 1})
        assert status == 409, (status, doc)
        assert f"run {run_id} is waiting: only a finished run can be forked" in doc["detail"], doc
        assert run_count(n) == before
        n.stop()


if __name__ == "__main__":
    run_tests([
        test_stricter_policy_diverges_at_the_first_mutating_step,
        test_cli_fork_with_a_denying_policy_waits_and_compares,
        test_amended_tool_result_is_the_forks,
        test_refusals_name_the_problem_and_create_nothing,
        test_an_unfinished_run_is_refused,
    ])
