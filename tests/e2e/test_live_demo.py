"""The live demo on real servers (scripts/demo-live.sh; docs/prometheus.md), from the example's own
files: examples/live/sreh.yaml served as it is, a real Prometheus (scripts/prometheus.sh) scraping
the sandbox's GET /sandbox/metrics and the node's GET /metrics with examples/live/rules.yml, a
real Alertmanager (scripts/alertmanager.sh) posting to the node's receiver. The scenario's fault
fires HighErrorRate in Prometheus, Alertmanager posts it, an incident Work opens and its run
diagnoses through prometheus.query and world.get (the sandbox's describe tools are disabled),
parks the rollback for an approval (review mode), and after the approval the alert resolves in
Prometheus and Alertmanager and the Work closes. The run's verification waits for Prometheus to
show the rollback (prometheus.settle) and the run ends `mitigated`."""

import json
import os
import shutil
import subprocess
import urllib.parse
import urllib.request

from cluster_harness import SOURCE
from harness import Node, TempDir, free_port, run_tests, sha256_hex, wait_until

LIVE = os.path.join(SOURCE, "examples", "live")
SCENARIO = os.path.join(SOURCE, "examples", "scenarios", "shop-checkout-bad-deploy.yaml")
SCRIPTS = os.path.join(SOURCE, "scripts")
TOKENS = {"sre": "live-sre-token", "alertmanager": "live-am-token",
          "prometheus": "live-prometheus-token"}


def obj(v):
    return v if isinstance(v, dict) else json.loads(v)


def get(url, path, **query):
    q = ("?" + urllib.parse.urlencode(query)) if query else ""
    with urllib.request.urlopen(f"{url}{path}{q}", timeout=10) as r:
        return json.loads(r.read())


class Live:
    """The node, Prometheus and Alertmanager of the demo, in `d`."""

    def __init__(self, d):
        self.d = d
        self.prom_port, self.am_port = free_port(), free_port()
        self.prom_url = f"http://127.0.0.1:{self.prom_port}"
        self.am_url = f"http://127.0.0.1:{self.am_port}"
        env = {"SREH_DEMO_SCENARIO": SCENARIO, "SREH_DEMO_PROMETHEUS": self.prom_url,
               "SREH_DEMO_ALERTMANAGER": self.am_url}
        self.token_files = {}
        for who, token in TOKENS.items():
            env[f"SREH_DEMO_{who.upper()}_SHA256"] = sha256_hex(token)
            self.token_files[who] = os.path.join(d, f"{who}.token")
            with open(self.token_files[who], "w") as f:
                f.write(token)
        self.node = Node(d, config_file=os.path.join(LIVE, "sreh.yaml"), env_extra=env,
                         token=TOKENS["sre"])

    def start(self):
        self.node.start()
        node_addr = f"127.0.0.1:{self.node.port}"
        subprocess.run([os.path.join(SCRIPTS, "alertmanager.sh"), "start",
                        os.path.join(self.d, "am"), str(self.am_port),
                        f"http://{node_addr}/v1/alerts/alertmanager",
                        self.token_files["alertmanager"]], check=True, capture_output=True)
        prom_dir = os.path.join(self.d, "prom")
        os.makedirs(prom_dir)
        shutil.copy(os.path.join(LIVE, "rules.yml"), os.path.join(prom_dir, "rules.yml"))
        subprocess.run([os.path.join(SCRIPTS, "prometheus.sh"), "start",
                        "--token-file", self.token_files["prometheus"],
                        "--alertmanager", f"127.0.0.1:{self.am_port}", prom_dir,
                        str(self.prom_port), node_addr, f"{node_addr}/sandbox/metrics"],
                       check=True, capture_output=True)
        return self

    def stop(self):
        for script, sub in (("prometheus.sh", "prom"), ("alertmanager.sh", "am")):
            subprocess.run([os.path.join(SCRIPTS, script), "stop", os.path.join(self.d, sub)],
                           check=False, capture_output=True)
        if self.node.proc is not None and self.node.proc.poll() is None:
            self.node.stop()

    def prom_alerts(self, name):
        return [a for a in get(self.prom_url, "/api/v1/alerts")["data"]["alerts"]
                if a["labels"]["alertname"] == name and a["state"] == "firing"]

    def am_alerts(self, name):
        return [a for a in get(self.am_url, "/api/v2/alerts", active="true")
                if a["labels"]["alertname"] == name and a["status"]["state"] == "active"]

    def works(self):
        status, _, doc = self.node.json("GET", "/v1/works?limit=100")
        assert status == 200, doc
        return doc["works"]

    def work(self, wid):
        status, _, doc = self.node.json("GET", f"/v1/works/{wid}")
        assert status == 200, doc
        return doc["work"]


def test_the_live_demo_loop():
    with TempDir() as d:
        live = Live(d)
        try:
            live.start()
            # Prometheus scrapes both endpoints of the node with the viewer's token.
            def targets_up():
                t = get(live.prom_url, "/api/v1/targets")["data"]["activeTargets"]
                up = {x["scrapeUrl"].split(str(live.node.port))[-1]: x["health"] for x in t
                      if str(live.node.port) in x["scrapeUrl"]}
                return up if up == {"/metrics": "up", "/sandbox/metrics": "up"} else None
            wait_until(targets_up, 30, "Prometheus to scrape /metrics and /sandbox/metrics")
            # The fault fires the real alert, on the entry point only (frontend).
            firing = wait_until(lambda: live.prom_alerts("HighErrorRate"), 30,
                                "HighErrorRate to fire in Prometheus")
            assert [a["labels"]["service"] for a in firing] == ["frontend"], firing
            w = wait_until(lambda: next(iter(live.works()), None), 30,
                           "Alertmanager's notification to open a Work")
            assert w["template"] == "incident" and w["creator"] == "alertmanager", w
            assert w["fields"]["service"] == "frontend" and w["fields"]["severity"] == "sev1", w
            wid = w["id"]
            # Review mode: the run parks the rollback of checkout for an approval.
            def pending():
                status, _, doc = live.node.json("GET", "/v1/approvals?state=pending")
                assert status == 200, doc
                return doc["approvals"] or None
            approvals = wait_until(pending, 60, "the rollback to wait for an approval")
            assert len(approvals) == 1, approvals
            a = approvals[0]
            assert a["tool"] == "deploy.rollback" and obj(a["args"]) == {
                "service": "checkout"}, a
            rid = a["run_id"]
            steps = live.node.steps(rid)
            tools = [s["tool"] for s in steps if s["kind"] == "tool"]
            # Diagnosed through Prometheus and world state, never the sandbox's describe tools.
            assert tools[0] == "world.get", tools
            described = [obj(s["args"])["entity"] for s in steps
                         if s.get("tool") == "prometheus.query"]
            assert "frontend" in described and "checkout" in described, tools
            disabled = {"topology.get", "service.describe", "host.describe", "jobs.list",
                        "metrics.query", "alerts.list"}
            assert not disabled & set(tools), tools
            checkout = next(s for s in steps if s.get("tool") == "prometheus.query"
                            and obj(s["args"])["entity"] == "checkout")
            # The reasoner fills in the kind from the topology (the `kind` argument role).
            assert obj(checkout["args"]) == {"entity": "checkout", "kind": "service"}, checkout
            assert checkout["result"]["current"]["error_rate"] > 0.05, checkout["result"]
            assert checkout["result"]["baseline"]["error_rate"] < 0.01, checkout["result"]
            # The alert's Work cannot approve itself: the SRE does.
            status, _, doc = live.node.json(
                "POST", f"/v1/approvals/{a['id']}/decision",
                {"decision": "approve", "comment": "the release is bad: roll it back"})
            assert status == 200, doc
            r = live.node.wait_run(rid, states=("succeeded",), timeout=90)
            # Its verification waited for Prometheus to show the rollback (prometheus.settle):
            # a durable timer, then a sample taken at least `settle` after the rollback ended;
            # the run's verdict agrees with what happened.
            assert r["outcome"] == "mitigated", r
            steps = live.node.steps(rid)
            rollback = next(s for s in steps if s.get("tool") == "deploy.rollback")
            after = steps[rollback["n"]:]
            timers = [s for s in after if s["kind"] == "timer"]
            assert timers, [s["kind"] for s in after]
            verified = [s for s in after if s.get("tool") == "prometheus.query"
                        and obj(s["args"])["entity"] == "checkout"]
            assert verified and verified[-1]["result"]["current"]["error_rate"] < 0.01, verified
            assert verified[-1]["result"]["settle_ms"] == 3000, verified[-1]["result"]
            assert "not mitigated" not in r["conclusion"], r["conclusion"]
            # The rollback ends the fault: the alert resolves in Prometheus, then Alertmanager,
            # whose resolved notification reaches the Work; its done-criteria close it.
            wait_until(lambda: not live.prom_alerts("HighErrorRate"), 60,
                       "HighErrorRate to stop firing in Prometheus")
            wait_until(lambda: not live.am_alerts("HighErrorRate"), 60,
                       "Alertmanager to resolve HighErrorRate")
            def closed():
                x = live.work(wid)
                entries = [e["data"] for e in x["timeline"] if e["kind"] == "work.alerts"]
                resolved = [e for e in entries if e.get("resolved")]
                return x if x["state"] == "resolved" and resolved else None
            done = wait_until(closed, 90, "the Work to resolve with the alert resolved")
            assert [(r["state"], r["outcome"]) for r in done["runs"]] == [
                ("succeeded", "mitigated")], done["runs"]
            assert len(live.works()) == 1, live.works()
            status, _, checkout = live.node.json("GET", "/v1/world/entities/checkout")
            assert status == 200 and checkout["entity"]["props"]["version"] == "v2.4.0", checkout
        finally:
            live.stop()


def test_disabling_a_tool_the_node_does_not_have_is_refused():
    with TempDir() as d:
        out = Node(d, testkit=False, config_extra=(
            f"sandbox:\n  scenario: {SCENARIO}\n"
            "tools:\n  disable: [service.describe, service.describ]\n")).start_fails()
        assert "tools.disable: this node has no tool 'service.describ' (it has: " in out, out


if __name__ == "__main__":
    run_tests([test_the_live_demo_loop, test_disabling_a_tool_the_node_does_not_have_is_refused])
