"""GET /metrics on a real node: the Prometheus text format that `promtool check metrics`
accepts, with the runs, steps, commits and HTTP requests a finished run leaves behind; a
viewer token is needed, as for every /v1 read."""

import re
import subprocess

from harness import Node, TempDir, run_tests

SCRIPT = ("model:\n  provider: scripted\n  script:\n"
          "    - {tool: test.echo, args: {probe: m}}\n"
          "    - {tool: test.echo, args: {probe: m}}\n")


def value(text, name, labels=""):
    """The value of the sample `name{labels}` (labels in the family's order)."""
    m = re.search(rf"^{re.escape(name)}{re.escape(labels)} (\S+)$", text, re.M)
    assert m, f"no sample {name}{labels} in:\n{text}"
    return float(m.group(1))


def test_metrics_pass_promtool_and_count_what_happened():
    with TempDir() as d:
        node = Node(d, config_extra=SCRIPT).start()
        status, _, doc = node.json("POST", "/v1/goals", {"goal": "echo twice"})
        assert status == 201, doc
        node.wait_run(doc["run"]["id"])
        status, headers, body = node.request("GET", "/metrics")
        assert status == 200, body
        assert headers["content-type"].startswith("text/plain; version=0.0.4"), headers
        text = body.decode()
        check = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True,
                               text=True, timeout=30)
        assert check.returncode == 0, check.stdout + check.stderr
        assert value(text, "sreh_runs_started_total") == 1
        assert value(text, "sreh_runs_finished_total", '{state="succeeded"}') == 1
        assert value(text, "sreh_steps_total") >= 2
        assert value(text, "sreh_step_duration_seconds_count", '{tool="test.echo"}') >= 2
        assert value(text, "sreh_commits_total") >= 1
        assert value(text, "sreh_commit_batches_count") >= 1
        assert value(text, "sreh_http_requests_total",
                     '{method="POST",route="/v1/goals",code="201"}') == 1
        assert value(text, "sreh_http_connections") >= 1
        assert "# TYPE sreh_http_request_duration_seconds histogram" in text
        status, _, _ = node.request("GET", "/metrics", token=None)
        assert status == 401
        node.stop()


if __name__ == "__main__":
    run_tests([test_metrics_pass_promtool_and_count_what_happened])
