"""`sreh replay`: a finished run run again from its journal on a scratch node, with the recorded
model answers and tool results, and compared step by step.

Shows: a sandbox incident (a bad checkout release) solved end to end through the `openai` and
the `anthropic` provider, the model being the test server (model_server.py) replaying a
realistic tool-calling conversation, in review mode so that the rollback parks for a second
person's approval; then `sreh replay` reaches the same steps, the same model requests (hashes)
and the same conclusion with the model server gone, and without calling it when it is up. A
builtin-reasoner run replays the same. A changed policy (rollback denied) makes the replay
diverge at the rollback, named. Bad input: an unknown run, a run that has not ended, a missing
store, a config of another model, bad options: each a clear error, exit 3 or 2; a replay
without --config that diverges says the config is missing and which tools it lacks.
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from harness import (Node, TempDir, auth_block, run_tests, sreh_cli, sse_events,  # noqa: E402
                     wait_until)
from model_server import ModelServer  # noqa: E402

ROOT = os.environ.get("SREH_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
SCENARIO = os.path.abspath(os.path.join(ROOT, "examples", "scenarios",
                                        "shop-checkout-bad-deploy.yaml"))
KEY = "sk-e2e-replay-4b1d"
ENV = {"E2E_MODEL_KEY": KEY}
TOKENS = {"otto": ("operator", "otto-replay-token"), "alice": ("approver", "alice-replay-token")}
GOAL = "frontend is returning errors; find the cause and mitigate"

# How an SRE model would work the incident: the dependencies, then errors and deploys of the
# suspect (two calls in one answer), the rollback, a check, then the conclusion.
CONVERSATION = [
    {"text": "Frontend errors: first what frontend depends on.",
     "calls": [("topology_get", "{}")]},
    {"text": "checkout is a dependency; its error rate and recent deploys.",
     "calls": [("metrics_query", '{"target": "checkout", "metric": "error_rate"}'),
               ("deploys_list", '{"service": "checkout"}')]},
    {"text": "checkout v2.4.1 shipped shortly before the errors began: rolling it back.",
     "calls": [("deploy_rollback", '{"service": "checkout"}')]},
    {"calls": [("metrics_query", '{"target": "frontend", "metric": "error_rate"}')]},
    {"text": "Cause: the checkout release v2.4.1 (bad deploy) made checkout fail, and frontend "
             "with it. Rolled checkout back to its previous version; frontend's error rate is "
             "back to normal."},
]


def config(provider, url, mode="review", extra=""):
    model = "model: {provider: builtin}\n"
    if provider != "builtin":
        base = url + "/v1" if provider == "openai" else url
        model = (f"model:\n  provider: {provider}\n  base_url: {base}\n  model: test-model\n"
                 f"  api_key: ${{E2E_MODEL_KEY}}\n  price: {{input: 3.0, output: 15.0}}\n")
    return f"policy_mode: {mode}\n{model}sandbox: {{scenario: {SCENARIO}}}\n" + extra


NO_ROLLBACKS = ("mode: autonomous\nrules:\n  - id: no-rollbacks\n    when: {tools: "
                "[deploy.rollback]}\n    effect: deny\n    reason: rollbacks are frozen\n")


def no_rollbacks_config(d, n):
    """A candidate config: node `n`'s (autonomous) with a policy that denies rollbacks."""
    policy = os.path.join(d, "no-rollback.yaml")
    with open(policy, "w") as f:
        f.write(NO_ROLLBACKS)
    with open(n.config) as f:
        text = f.read().replace("policy_mode: autonomous\n", f"policy_file: {policy}\n")
    candidate = os.path.join(d, "candidate.yaml")
    with open(candidate, "w") as f:
        f.write(text)
    return candidate


def start(d, cfg):
    return Node(d, cfg, env_extra=ENV, auth=auth_block(TOKENS), token=TOKENS["otto"][1],
                testkit=False).start()


def submit(n):
    status, _, doc = n.json("POST", "/v1/goals", {"goal": GOAL, "labels": {"service": "frontend"}})
    assert status == 201, (status, doc)
    return doc["run"]["id"]


def approve_rollback(n, run_id):
    """Waits for the run to ask for an approval, checks it is the rollback, and approves it as
    the second person."""
    for _, kind, data in sse_events(n.port, f"/v1/runs/{run_id}/events", timeout=60,
                                    token=TOKENS["otto"][1]):
        if kind == "approval.requested":
            ev = json.loads(data)["data"]
            assert ev["tool"] == "deploy.rollback", ev
            status, _, doc = n.json("POST", f"/v1/approvals/{ev['approval']}/decision",
                                    {"decision": "approve", "comment": "bad release, roll back"},
                                    token=TOKENS["alice"][1])
            assert status == 200, (status, doc)
            return
        assert kind not in ("run.succeeded", "run.failed"), f"ended without approval: {kind}"
    raise AssertionError("the run never asked for approval")


def replay(n, run_id, *extra, env=None):
    rc, out, err = sreh_cli(["replay", run_id, "--config", n.config, *extra],
                            env_extra=env or ENV)
    return rc, out, err


def solved_through(d, provider):
    """Solves the incident through `provider` on a node in `d`; returns (node, run id, steps)
    with the node still up and the model server gone."""
    with ModelServer(CONVERSATION, KEY) as srv:
        n = start(d, config(provider, srv.url))
        run_id = submit(n)
        approve_rollback(n, run_id)
        r = n.wait_run(run_id, timeout=60)
        assert not srv.violations, srv.violations
        assert srv.count() == len(CONVERSATION), srv.count()
    steps = n.steps(run_id)
    assert r["state"] == "succeeded", (r, steps)
    assert "v2.4.1" in r["conclusion"], r["conclusion"]
    tools = [s["tool"] for s in steps if s["kind"] == "tool"]
    assert tools == ["topology.get", "metrics.query", "deploys.list", "deploy.rollback",
                     "metrics.query"], tools
    rollback = next(s for s in steps if s["tool"] == "deploy.rollback")
    assert rollback["state"] == "succeeded", rollback
    assert rollback["decision"]["policy"]["effect"] == "require_approval", rollback["decision"]
    assert "v2.4.1" in json.dumps(next(s for s in steps if s["tool"] == "deploys.list")["result"])
    return n, run_id, steps


def check_same(out, reason_steps):
    doc = json.loads(out)
    assert doc["same"] is True, json.dumps(doc, indent=1)
    assert doc["first_divergence"] is None
    assert doc["reason_steps"] == reason_steps, doc
    assert doc["same_request_hashes"] == reason_steps, doc
    assert doc["same_end"] and doc["recorded_end"].startswith("succeeded: Cause"), doc
    assert all(s["same"] for s in doc["steps"])
    return doc


def incident_replays_through(provider):
    with TempDir() as d:
        n, run_id, steps = solved_through(d, provider)
        # The model server is gone: the replay needs none. The node still runs (its store is
        # read while it serves).
        rc, out, err = replay(n, run_id, "--json")
        assert rc == 0, (rc, out, err)
        doc = check_same(out, len(CONVERSATION))
        assert len(doc["steps"]) == len(steps), (len(doc["steps"]), len(steps))
        assert any("recorded votes" in note for note in doc["notes"]), doc["notes"]
        assert doc["replay_run"] != run_id
        # And as text, with the node stopped.
        n.stop()
        rc, out, err = replay(n, run_id)
        assert rc == 0, (rc, out, err)
        assert "same steps and end" in out, out
        assert f"{len(CONVERSATION)} of {len(CONVERSATION)} reason steps assembled the same" in out
        assert "deploy.rollback" in out


def test_openai_incident_replays_without_the_model():
    incident_replays_through("openai")


def test_anthropic_incident_replays_without_the_model():
    incident_replays_through("anthropic")


def test_replay_never_calls_a_model_server_that_is_up():
    with TempDir() as d, ModelServer(CONVERSATION, KEY) as srv:
        n = start(d, config("openai", srv.url, mode="autonomous"))
        run_id = submit(n)
        r = n.wait_run(run_id, timeout=60)
        assert r["state"] == "succeeded", r
        before = srv.count()
        rc, out, err = replay(n, run_id, "--json")
        assert rc == 0, (rc, out, err)
        check_same(out, len(CONVERSATION))
        assert srv.count() == before, f"the replay called the model: {srv.count()} > {before}"
        n.stop()


def test_builtin_run_replays_the_same():
    with TempDir() as d:
        n = start(d, config("builtin", None, mode="autonomous"))
        run_id = submit(n)
        r = n.wait_run(run_id, timeout=60)
        assert r["state"] == "succeeded", r
        n.stop()
        rc, out, err = replay(n, run_id, "--json")
        assert rc == 0, (rc, out, err)
        doc = json.loads(out)
        assert doc["same"] and doc["reason_steps"] == 0, doc
        assert any("deploy.rollback" in s["recorded"] for s in doc["steps"]), doc["steps"]
        # Without --config the replay runs the defaults, which have no sandbox tools: it
        # diverges, and says that the config is missing and which tools it lacks.
        rc, out, err = sreh_cli(["replay", run_id, "--data-dir", n.data], env_extra=ENV)
        assert rc == 1 and "diverged" in out, (rc, out, err)
        assert "no --config was given" in err and "topology.get" in err and \
            "sreh replay RUN --config FILE" in err, err


def test_a_run_steered_by_messages_replays_the_same():
    """The messages people said to a run are fed to its replay at the steps the run took them:
    "check cart-cache first" reorders the replay's checks the same way, a question and its reply
    are taken at the same steps, and "leave checkout alone" keeps the replay from rolling back."""
    with TempDir() as d:
        n = start(d, f"policy_mode: autonomous\nmodel: {{provider: builtin}}\n"
                     f"sandbox: {{scenario: {SCENARIO}, call_delay_ms: 150}}\n")
        run_id = submit(n)

        def say(text):
            status, _, doc = n.json("POST", f"/v1/runs/{run_id}/messages", {"text": text})
            assert status == 201, (status, doc)

        wait_until(lambda: len(n.steps(run_id)) >= 2, 60, "the run's first steps")
        say("check cart-cache first")
        say("what are you doing?")
        wait_until(lambda: any(s["kind"] == "tool" and "cart-cache" in json.dumps(s["args"])
                               for s in n.steps(run_id)), 60, "cart-cache described")
        say("leave checkout alone")
        r = n.wait_run(run_id, timeout=90)
        steps = n.steps(run_id)
        kinds = [s["kind"] for s in steps]
        assert kinds.count("message") == 3 and kinds.count("reply") == 1, kinds
        assert not [s for s in steps if s["tool"] == "deploy.rollback"], steps
        assert r["state"] == "succeeded" and "constraint from otto" in r["conclusion"], r
        n.stop()
        rc, out, err = replay(n, run_id, "--json")
        assert rc == 0, (rc, out, err)
        doc = json.loads(out)
        assert doc["same"] and doc["same_end"] and doc["first_divergence"] is None, \
            json.dumps(doc, indent=1)
        assert len(doc["steps"]) == len(steps), (len(doc["steps"]), len(steps))
        recorded = [s["recorded"] for s in doc["steps"]]
        assert 'message from otto: "leave checkout alone" (constraint)' in recorded, recorded
        assert 'message from otto: "check cart-cache first" (check_first)' in recorded, recorded
        assert any(x.startswith('reply "') for x in recorded), recorded
        rc, out, err = replay(n, run_id)
        assert rc == 0 and "same steps and end" in out, (rc, out, err)


def test_changed_policy_diverges_at_the_rollback():
    with TempDir() as d, ModelServer(CONVERSATION, KEY) as srv:
        n = start(d, config("openai", srv.url, mode="autonomous"))
        run_id = submit(n)
        assert n.wait_run(run_id, timeout=60)["state"] == "succeeded"
        recorded = [s["tool"] for s in n.steps(run_id)]
        n.stop()
        # The candidate config denies rollbacks: the replay shows where that changes the run.
        candidate = no_rollbacks_config(d, n)
        rc, out, err = sreh_cli(["replay", run_id, "--config", candidate], env_extra=ENV)
        assert rc == 1, (rc, out, err)
        rollback_n = 1 + recorded.index("deploy.rollback")
        assert f"diverged at step {rollback_n}" in out, out
        assert "policy: recorded allow" in out and "replay deny (no-rollbacks)" in out, out


# A runbook with a wait (a check every second until checkout recovers) and a retried rollback.
ROLLBACK_FLOW = os.path.join(ROOT, "examples", "flows", "rollback-service.yaml")


def flow_node(d):
    """An autonomous builtin node with the rollback runbook (its waits in seconds) and a flow
    that starts a goal run of its own."""
    flows = os.path.join(d, "flows")
    os.makedirs(flows)
    with open(ROLLBACK_FLOW) as f:
        text = f.read().replace("deadline: 10m", "deadline: 30s").replace("every: 30s", "every: 1s")
    with open(os.path.join(flows, "rollback-service.yaml"), "w") as f:
        f.write(text.replace("initial: 10s", "initial: 1s"))
    with open(os.path.join(flows, "ask.yaml"), "w") as f:
        f.write("flow: ask\nversion: '1'\ndescription: hands the incident to the reasoner\n"
                "steps:\n  - id: look\n    goal: frontend is returning errors; find the cause\n")
    return start(d, config("builtin", None, mode="autonomous", extra=f"flows: {flows}\n"))


def run_flow(n, name, inputs):
    status, _, doc = n.json("POST", f"/v1/flows/{name}/runs", {"inputs": inputs})
    assert status == 201, (status, doc)
    r = n.wait_run(doc["run"]["id"], timeout=60)
    assert r["state"] == "succeeded", r
    return r["id"]


def test_flow_run_replays_and_a_policy_diverges_at_its_rollback():
    with TempDir() as d:
        n = flow_node(d)
        run_id = run_flow(n, "rollback-service", {"service": "checkout"})
        steps = n.steps(run_id)
        kinds = [s["kind"] for s in steps]
        assert "timer" in kinds and kinds.count("observe") >= 2, kinds  # it waited
        rollback_n = next(s["n"] for s in steps if s["tool"] == "deploy.rollback")
        asker = run_flow(n, "ask", {})
        n.stop()
        # The same flow, its checks judged as recorded, its waits at once: the same steps.
        rc, out, err = replay(n, run_id, "--json")
        assert rc == 0, (rc, out, err)
        doc = json.loads(out)
        assert doc["same"] and doc["reason_steps"] == 0, json.dumps(doc, indent=1)
        assert len(doc["steps"]) == len(steps), doc["steps"]
        assert doc["wall_ms"] < 10_000, doc["wall_ms"]  # the recorded waits are not waited again
        # Under a policy that freezes rollbacks the runbook's rollback is denied: named.
        candidate = no_rollbacks_config(d, n)
        rc, out, err = sreh_cli(["replay", run_id, "--config", candidate], env_extra=ENV)
        assert rc == 1, (rc, out, err)
        assert f"diverged at step {rollback_n}" in out, out
        assert "replay deny (no-rollbacks)" in out, out
        # A flow run that started a run of its own does not replay, and says why.
        rc, out, err = replay(n, asker)
        assert rc == 3 and "started runs of its own at step 1" in err, (rc, out, err)


def test_bad_input_is_named():
    with TempDir() as d, ModelServer(CONVERSATION, KEY) as srv:
        n = start(d, config("builtin", None))  # review mode: the rollback waits
        run_id = submit(n)
        wait_until(lambda: n.run(run_id)["state"] == "waiting", 60, "the run to park")
        rc, out, err = replay(n, run_id)
        assert rc == 3 and "has not ended (it is waiting)" in err, (rc, out, err)
        rc, out, err = replay(n, "run_doesnotexist")
        assert rc == 3 and "run_doesnotexist is not in the store" in err, (rc, out, err)
        rc, out, err = sreh_cli(["replay", run_id, "--config", n.config, "--data-dir",
                                 os.path.join(d, "nowhere")], env_extra=ENV)
        assert rc == 3 and "no store at" in err and "nowhere" in err, (rc, out, err)
        rc, out, err = sreh_cli(["replay"])
        assert rc == 2 and "no run given" in err, (rc, out, err)
        rc, out, err = sreh_cli(["replay", run_id, "--frobnicate"])
        assert rc == 2 and "unknown option '--frobnicate'" in err, (rc, out, err)
        rc, out, err = sreh_cli(["replay", "a", "b"])
        assert rc == 2 and "one run at a time" in err, (rc, out, err)
        # A run the builtin reasoner drove, replayed with a language-model config.
        status, _, doc = n.json("POST", f"/v1/runs/{run_id}/cancel", {})
        assert status in (200, 202), (status, doc)
        n.wait_run(run_id, timeout=30)
        with open(n.config) as f:
            text = f.read().replace("model: {provider: builtin}\n",
                                    f"model: {{provider: openai, base_url: {srv.url}/v1, "
                                    f"model: m, api_key: x}}\n")
        other = os.path.join(d, "other.yaml")
        with open(other, "w") as f:
            f.write(text)
        rc, out, err = sreh_cli(["replay", run_id, "--config", other], env_extra=ENV)
        assert rc == 3 and "driven by a deterministic reasoner" in err, (rc, out, err)
        assert srv.count() == 0
        n.stop()


if __name__ == "__main__":
    run_tests([
        test_openai_incident_replays_without_the_model,
        test_anthropic_incident_replays_without_the_model,
        test_replay_never_calls_a_model_server_that_is_up,
        test_builtin_run_replays_the_same,
        test_a_run_steered_by_messages_replays_the_same,
        test_changed_policy_diverges_at_the_rollback,
        test_flow_run_replays_and_a_policy_diverges_at_its_rollback,
        test_bad_input_is_named,
    ])
