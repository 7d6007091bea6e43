"""http.probe on a real node, probing the node's own HTTP front: a healthy endpoint with a body
match, an unexpected status, a closed port and a HEAD are observations (the step succeeds, `ok`
says how the endpoint is); a host outside tools.http_probe.allow and a bad URL are tool errors;
a bad allow entry stops the node at start."""

import json

from harness import Node, TempDir, free_port, run_tests


def script(steps):
    lines = "".join(f"    - {{tool: http.probe, args: {json.dumps(a)}}}\n" for a in steps)
    return "model:\n  provider: scripted\n  script:\n" + lines


def test_probes_report_what_they_see():
    with TempDir() as d:
        closed = free_port()
        node = Node(d)
        base = f"http://127.0.0.1:{node.port}"
        steps = [
            {"url": f"{base}/healthz", "body_match": '"status":"ok"'},
            {"url": f"{base}/no/such/path", "expect_status": 200},
            {"url": f"http://127.0.0.1:{closed}/healthz"},
            {"url": f"{base}/healthz", "method": "HEAD"},
            {"url": f"http://localhost:{node.port}/healthz"},
            {"url": "ftp://127.0.0.1/x"},
        ]
        node = Node(d, port=node.port, config_extra=script(steps) + (
            "tools:\n  testkit: true\n  http_probe:\n    allow: [127.0.0.1]\n"
            "    timeout_ms: 2000\n"), testkit=False).start()
        status, _, doc = node.json("POST", "/v1/goals", {"goal": "probe"})
        assert status == 201, doc
        node.wait_run(doc["run"]["id"])
        got = [s for s in node.steps(doc["run"]["id"]) if s["kind"] == "tool"]
        assert len(got) == len(steps), got
        healthy, missing, down, head, other_host, bad_url = got
        r = healthy["result"]
        assert healthy["state"] == "succeeded" and r["ok"] and r["status"] == 200, r
        assert r["body_matched"] and r["latency_ms"] >= 0, r
        r = missing["result"]
        assert missing["state"] == "succeeded" and not r["ok"] and r["status"] == 404, r
        r = down["result"]
        assert down["state"] == "succeeded" and not r["ok"] and "refused" in r["error"], r
        r = head["result"]
        assert head["state"] == "succeeded" and r["ok"] and r["status"] == 200, r
        assert other_host["state"] == "failed", other_host
        assert "host 'localhost' is not in tools.http_probe.allow (127.0.0.1)" in \
            other_host["error"], other_host
        assert bad_url["state"] == "failed" and "expected http://host" in bad_url["error"], bad_url
        node.stop()


def test_a_bad_allow_entry_is_refused():
    with TempDir() as d:
        out = Node(d, config_extra="tools:\n  testkit: true\n  http_probe:\n"
                                   "    allow: ['http://x']\n", testkit=False).start_fails()
        assert "tools.http_probe.allow[0]: 'http://x' is not a host name or *.domain" in out, out


if __name__ == "__main__":
    run_tests([test_probes_report_what_they_see, test_a_bad_allow_entry_is_refused])
