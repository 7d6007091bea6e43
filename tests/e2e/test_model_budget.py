"""Per-run budgets of model use: `budget.max_tokens` and `budget.max_cost` (the price of a run's
model calls, from the routes' `price` table), set per node in config and lowered per request.

Shows: a run whose first model call costs more than its max_cost fails naming the cost and the
limit, after that one call (no second request reaches the model); the same for max_tokens; the
run's JSON and `sreh show` carry the budget; a request may lower the node's max_cost but not
raise it (400 naming budget.max_cost), and a negative max_cost in config stops the node at
start naming FILE:LINE:COL.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from harness import Node, TempDir, run_tests, sreh_cli  # noqa: E402
from model_server import ModelServer  # noqa: E402

KEY = "sk-e2e-budget-77aa"
ENV = {"E2E_MODEL_KEY": KEY}
CONVERSATION = [
    {"text": "Checking first.", "calls": [("test_echo", '{"check": "cpu"}')]},
    {"text": "All fine."},
]


def config(url, budget=""):
    return (f"model:\n  provider: openai\n  base_url: {url}/v1\n  model: test-model\n"
            f"  api_key: ${{E2E_MODEL_KEY}}\n  price: {{input: 3.0, output: 15.0}}\n" + budget)


def run_with(node, budget):
    status, _, doc = node.json("POST", "/v1/goals", {"goal": "check the checkout service",
                                                     "budget": budget})
    assert status == 201, (status, doc)
    return node.wait_run(doc["run"]["id"], timeout=60)


def test_cost_over_max_cost_fails_the_run_after_that_call():
    with TempDir() as d, ModelServer(CONVERSATION, KEY) as srv:
        node = Node(d, config(srv.url, "budget: {max_cost: 0.5}\n"), env_extra=ENV).start()
        r = run_with(node, {"max_cost": 0.000001})
        assert r["state"] == "failed", r
        assert r["error"].startswith("budget exhausted: the model calls cost "), r["error"]
        assert "max_cost is 1e-06" in r["error"], r["error"]
        assert r["budget"]["max_cost"] == 0.000001 and r["cost"] > 0.000001, r
        assert srv.count() == 1, f"a second model call after the budget ran out: {srv.count()}"
        rc, out, err = sreh_cli(["show", r["id"], "--server", f"127.0.0.1:{node.port}"])
        assert "cost:" in out and "(max 1e-06)" in out, (rc, out, err)
        # Within the node's limit, the same conversation ends normally.
        ok = run_with(node, {})
        assert ok["state"] == "succeeded", ok
        assert ok["budget"]["max_cost"] == 0.5 and 0 < ok["cost"] < 0.5, ok
        node.stop()


def test_tokens_over_max_tokens_fail_the_run():
    with TempDir() as d, ModelServer(CONVERSATION, KEY) as srv:
        node = Node(d, config(srv.url), env_extra=ENV).start()
        r = run_with(node, {"max_tokens": 5})
        assert r["state"] == "failed", r
        assert r["error"].startswith("budget exhausted: ") and "max_tokens is 5" in r["error"], r
        assert srv.count() == 1, srv.count()
        node.stop()


def test_a_request_cannot_raise_the_node_limit():
    with TempDir() as d, ModelServer(CONVERSATION, KEY) as srv:
        node = Node(d, config(srv.url, "budget: {max_cost: 0.5}\n"), env_extra=ENV).start()
        before = node.json("GET", "/v1/runs")[2]
        status, _, doc = node.json("POST", "/v1/goals", {"goal": "g", "budget": {"max_cost": 2}})
        assert status == 400, (status, doc)
        assert "budget.max_cost" in doc["detail"] and "at most 0.5" in doc["detail"], doc
        status, _, doc = node.json("POST", "/v1/goals", {"goal": "g", "budget": {"max_cost": -1}})
        assert status == 400 and "budget.max_cost" in doc["detail"], (status, doc)
        assert node.json("GET", "/v1/runs")[2] == before, "a refused request created a run"
        assert srv.count() == 0
        node.stop()


def test_negative_max_cost_in_config_is_named():
    with TempDir() as d:
        node = Node(d, "budget: {max_cost: -0.1}\n")
        msg = node.start_fails()
        assert "sreh.yaml:" in msg and "max_cost" in msg and "at least 0" in msg, msg


if __name__ == "__main__":
    run_tests([test_cost_over_max_cost_fails_the_run_after_that_call,
               test_tokens_over_max_tokens_fail_the_run,
               test_a_request_cannot_raise_the_node_limit,
               test_negative_max_cost_in_config_is_named])
