"""The Prometheus toolset against a real Prometheus (Debian's, started by
scripts/prometheus.sh, scraping itself every second, with an always-firing rule): each tool
answers from the real HTTP API, results are capped (series) and say so, a PromQL syntax error
is Prometheus's bad_data in a clear tool error, the deny list refuses a query before it is
sent, and an unreachable Prometheus is named in the error."""

import json
import os
import subprocess
import urllib.parse
import urllib.request

from cluster_harness import SOURCE
from harness import Node, TempDir, free_port, run_tests, wait_until

SCRIPT = [
    ("prometheus.query", {"query": "up"}),
    ("prometheus.query", {"query": "up{"}),
    ("prometheus.query", {"query": '{__name__=~"up|prometheus_build_info"}'}),
    ("prometheus.query_range", {"query": "up", "start": "2020-01-01T00:00:00Z",
                                "end": "2020-01-01T00:01:00Z", "step": "15s"}),
    ("prometheus.targets", {}),
    ("prometheus.series", {"match": ["up"]}),
    ("prometheus.alerts", {}),
    ("prometheus.query", {"query": 'count_values("v", up)'}),
]


def script_block(steps):
    lines = "".join(f"    - {{tool: {t}, args: {json.dumps(a)}}}\n" for t, a in steps)
    return "model:\n  provider: scripted\n  script:\n" + lines


class Prometheus:
    def __init__(self):
        self.dir = f"/tmp/sreh-e2e-prom-{os.getpid()}"
        self.port = free_port()
        self.url = None

    def start(self):
        self.url = subprocess.run([os.path.join(SOURCE, "scripts", "prometheus.sh"), "start",
                                   self.dir, str(self.port)], capture_output=True, text=True,
                                  check=True, timeout=60).stdout.strip()
        return self

    def api(self, path, **params):
        q = urllib.parse.urlencode(params)
        with urllib.request.urlopen(f"{self.url}{path}?{q}", timeout=5) as r:
            return json.load(r)["data"]

    def close(self):
        subprocess.run([os.path.join(SOURCE, "scripts", "prometheus.sh"), "stop", self.dir],
                       capture_output=True, timeout=60)


def test_every_tool_against_a_real_prometheus():
    prom = Prometheus().start()
    try:
        # Its first scrape of itself and the rule's first evaluation: then every tool has data.
        wait_until(lambda: prom.api("/api/v1/query", query="up")["result"], 30, "a first scrape")
        wait_until(lambda: [a for a in prom.api("/api/v1/alerts")["alerts"]
                            if a["state"] == "firing"], 30, "the test alert to fire")
        with TempDir() as d:
            node = Node(d, config_extra=script_block(SCRIPT) + (
                f"prometheus:\n  url: {prom.url}\n  max_series: 1\n"
                "  deny: ['count_values']\n")).start()
            status, _, doc = node.json("POST", "/v1/goals", {"goal": "look at prometheus"})
            assert status == 201, doc
            node.wait_run(doc["run"]["id"])
            steps = [s for s in node.steps(doc["run"]["id"]) if s["kind"] == "tool"]
            assert [s["tool"] for s in steps] == [t for t, _ in SCRIPT], steps
            res = [s["result"] if s["state"] == "succeeded" else s["error"]
                   for s in steps]
            up = res[0]
            assert up["resultType"] == "vector" and up["series"] == 1, up
            assert up["result"][0]["metric"]["job"] == "test" and up["result"][0]["value"][1] == "1"
            assert steps[1]["state"] == "failed" and "Prometheus bad_data (HTTP 400)" in res[1], res[1]
            capped = res[2]
            assert capped["series"] == 2 and len(capped["result"]) == 1 and capped["truncated"], capped
            assert res[3]["resultType"] == "matrix" and res[3]["result"] == [], res[3]
            assert res[4]["count"] == 1 and res[4]["activeTargets"][0]["health"] == "up", res[4]
            assert res[5]["count"] == 1 and res[5]["series"][0]["__name__"] == "up", res[5]
            alerts = res[6]["alerts"]
            assert alerts and alerts[0]["labels"]["alertname"] == "SrehTestAlwaysFiring", res[6]
            assert steps[7]["state"] == "failed" and "denied by prometheus.deny" in res[7], res[7]
            node.stop()
    finally:
        prom.close()


SANDBOX = os.path.join(SOURCE, "examples", "scenarios", "shop-checkout-bad-deploy.yaml")
ENTITY_SCRIPT = [
    ("prometheus.query", {"entity": "checkout", "kind": "service"}),
    ("prometheus.query", {"entity": "orders-db", "kind": "database"}),
    ("prometheus.query", {"entity": "nope", "kind": "service"}),
    ("prometheus.query", {"entity": "checkout", "kind": "host"}),
    ("prometheus.query", {"entity": "checkout", "query": "up"}),
    ("prometheus.query", {"entity": "order-events", "kind": "queue"}),
]
ENTITIES = """  baseline: ""
  entities:
    service:
      metrics:
        error_rate: {query: 'sandbox_error_rate{entity="$entity"}', baseline: 'sandbox_error_rate_baseline{entity="$entity"}'}
        latency_p99_ms: '1000 * sandbox_latency_p99_seconds{entity="$entity"}'
      fields: {replicas: 'sandbox_replicas{entity="$entity"}'}
    database:
      metrics:
        connections: {query: 'sandbox_connections{entity="$entity"}', baseline: 'sandbox_connections_baseline{entity="$entity"}'}
      fields: {max_connections: 'sandbox_max_connections{entity="$entity"}'}
    queue:
      metrics:
        rps: 'sandbox_rps{entity="$entity"'
"""


def test_entities_described_from_the_sandbox_exporter():
    """prometheus.query {entity, kind}: the `prometheus.entities` mapping evaluated against a
    real Prometheus that scrapes the sandbox's GET /sandbox/metrics (which promtool accepts):
    metrics now, their baselines and fields, each PromQL shown; an entity Prometheus does not
    know, an unmapped kind, both modes at once and a broken mapping are clear tool errors."""
    with TempDir() as d:
        prom = Prometheus()
        node = Node(d, config_extra=script_block(ENTITY_SCRIPT) + (
            f"sandbox:\n  scenario: {SANDBOX}\n"
            f"prometheus:\n  url: http://127.0.0.1:{prom.port}\n" + ENTITIES))
        node.start(wait=True)
        token_file = os.path.join(d, "scrape.token")
        with open(token_file, "w") as f:
            f.write(node.token)
        status, hdrs, text = node.request("GET", "/sandbox/metrics")
        assert status == 200 and hdrs["content-type"].startswith("text/plain; version=0.0.4"), status
        lint = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True)
        assert lint.returncode == 0, lint.stdout + lint.stderr
        assert b'sandbox_error_rate{entity="checkout",kind="service"}' in text, text[:400]
        prom.url = subprocess.run([os.path.join(SOURCE, "scripts", "prometheus.sh"), "start",
                                   "--token-file", token_file, prom.dir, str(prom.port),
                                   f"127.0.0.1:{node.port}/sandbox/metrics"], capture_output=True,
                                  text=True, check=True, timeout=60).stdout.strip()
        try:
            wait_until(lambda: prom.api("/api/v1/query", query="sandbox_error_rate")["result"],
                       30, "a first scrape of /sandbox/metrics")
            status, _, doc = node.json("POST", "/v1/goals", {"goal": "describe from prometheus"})
            assert status == 201, doc
            node.wait_run(doc["run"]["id"])
            steps = [s for s in node.steps(doc["run"]["id"]) if s["kind"] == "tool"]
            assert len(steps) == len(ENTITY_SCRIPT), steps
            checkout = steps[0]["result"]
            assert checkout["current"]["error_rate"] > 0.05, checkout
            assert checkout["baseline"] == {"error_rate": 0.002}, checkout
            assert checkout["fields"] == {"replicas": 3}, checkout
            assert checkout["queries"]["error_rate"] == {
                "query": 'sandbox_error_rate{entity="checkout"}',
                "baseline": 'sandbox_error_rate_baseline{entity="checkout"}'}, checkout
            db = steps[1]["result"]
            assert db["fields"] == {"max_connections": 200} and db["baseline"]["connections"] == 60
            errors = [s["error"] for s in steps[2:]]
            assert all(s["state"] == "failed" for s in steps[2:]), steps[2:]
            assert "Prometheus has no series for service 'nope'" in errors[0], errors[0]
            assert "prometheus.entities maps no kind 'host' (it maps database, queue, service)" \
                in errors[1], errors[1]
            assert "give either `query` (PromQL) or `entity`" in errors[2], errors[2]
            assert "Prometheus bad_data (HTTP 400)" in errors[3], errors[3]
            assert "prometheus.entities.queue.metrics.rps" in errors[3], errors[3]
            node.stop()
        finally:
            prom.close()


def test_an_unreachable_prometheus_is_named():
    port = free_port()  # nothing listens there
    with TempDir() as d:
        node = Node(d, config_extra=script_block([("prometheus.query", {"query": "up"})]) + (
            f"prometheus:\n  url: http://127.0.0.1:{port}\n  timeout_ms: 2000\n")).start()
        status, _, doc = node.json("POST", "/v1/goals", {"goal": "prometheus is away"})
        assert status == 201, doc
        node.wait_run(doc["run"]["id"])
        step = [s for s in node.steps(doc["run"]["id"]) if s["kind"] == "tool"][0]
        assert step["state"] == "failed", step
        assert f"Prometheus at http://127.0.0.1:{port} is unreachable" in step["error"], step
        node.stop()


def test_a_bad_prometheus_config_is_refused():
    with TempDir() as d:
        out = Node(d, config_extra="prometheus:\n  url: 127.0.0.1:9090\n").start_fails()
        assert "prometheus.url: expected http://host:port[/prefix]" in out, out


if __name__ == "__main__":
    run_tests([
        test_every_tool_against_a_real_prometheus,
        test_entities_described_from_the_sandbox_exporter,
        test_an_unreachable_prometheus_is_named,
        test_a_bad_prometheus_config_is_refused,
    ])
