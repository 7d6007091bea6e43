"""Alertmanager in: the real Alertmanager 0.25 (scripts/alertmanager.sh) sends its webhook to
POST /v1/alerts/alertmanager with a bearer token; a firing group opens one incident Work from
examples/templates/incident.yaml (fields from the alerts' labels and annotations, severity
mapped), which runs the sandbox incident and resolves; the resolved notification annotates it.
Payloads of 0.25 and of a newer release (fixtures/) are accepted, repeats are idempotent, and
bad payloads and tokens get a 4xx and change nothing."""

import datetime
import json
import os
import shutil
import subprocess
import urllib.request

from cluster_harness import SOURCE
from harness import TOKEN, Node, TempDir, auth_block, free_port, run_tests, wait_until

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures")
DEMO = os.path.join(SOURCE, "examples", "scenarios", "shop-checkout-bad-deploy.yaml")
INCIDENT = os.path.join(SOURCE, "examples", "templates", "incident.yaml")
AM_TOKEN = "alertmanager-webhook-token"
TOKENS = {"e2e-admin": ("admin", TOKEN), "alertmanager": ("operator", AM_TOKEN),
          "vera": ("viewer", "vera-token")}


AM_SCRIPT = os.path.join(SOURCE, "scripts", "alertmanager.sh")


def start_alertmanager(d, webhook):
    """A real Alertmanager in d/am posting to `webhook` with AM_TOKEN; returns its URL and dir
    (stop it with stop_alertmanager)."""
    token_file = os.path.join(d, "am.token")
    with open(token_file, "w") as f:
        f.write(AM_TOKEN)
    am_dir = os.path.join(d, "am")
    url = subprocess.run([AM_SCRIPT, "start", am_dir, str(free_port()), webhook, token_file],
                         check=True, capture_output=True, text=True).stdout.strip()
    return url, am_dir


def stop_alertmanager(am_dir):
    subprocess.run([AM_SCRIPT, "stop", am_dir], check=False)


def fixture(name):
    with open(os.path.join(FIXTURES, name)) as f:
        return json.load(f)


def node_for(d, extra=""):
    tdir = os.path.join(d, "templates")
    os.makedirs(tdir, exist_ok=True)
    shutil.copy(INCIDENT, tdir)
    return Node(d, testkit=False, auth=auth_block(TOKENS), config_extra=(
        f"works:\n  templates: {tdir}\n  check_every: 1s\n  world_sync: 1s\n"
        f"sandbox:\n  scenario: {DEMO}\n  time_scale: 60\n"
        "alertmanager:\n  receiver: {template: incident}\n" + extra))


def post(node, payload, token=AM_TOKEN):
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return node.json("POST", "/v1/alerts/alertmanager", body,
                     {"Content-Type": "application/json"}, token=token)


def works(node):
    status, _, doc = node.json("GET", "/v1/works?limit=500")
    assert status == 200, doc
    return doc["works"]


def work(node, wid):
    status, _, doc = node.json("GET", f"/v1/works/{wid}")
    assert status == 200, doc
    return doc["work"]


def alert_entries(w):
    return [e["data"] for e in w["timeline"] if e["kind"] == "work.alerts"]


def am_post_alerts(url, alerts):
    req = urllib.request.Request(f"{url}/api/v2/alerts", data=json.dumps(alerts).encode(),
                                 headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(req, timeout=10) as r:
        assert r.status == 200, r.status


def test_real_alertmanager_opens_an_incident_that_resolves():
    with TempDir() as d:
        node = node_for(d).start()
        am, am_dir = start_alertmanager(d, f"http://127.0.0.1:{node.port}/v1/alerts/alertmanager")
        try:
            now = datetime.datetime.now(datetime.timezone.utc)
            alert = {"labels": {"alertname": "HighErrorRate", "service": "frontend",
                                "severity": "critical"},
                     "annotations": {"summary": "frontend 5xx above 5% for 5m"},
                     "startsAt": now.isoformat(),
                     "generatorURL": "http://prometheus.example/graph"}
            am_post_alerts(am, [alert])
            w = wait_until(lambda: next(iter(works(node)), None), 30,
                           "Alertmanager's notification to open a Work")
            assert w["template"] == "incident" and w["creator"] == "alertmanager", w
            assert w["fields"] == {"service": "frontend", "alert": "HighErrorRate",
                                   "summary": "frontend 5xx above 5% for 5m",
                                   "severity": "sev1"}, w["fields"]
            assert w["labels"]["alertname"] == "HighErrorRate", w["labels"]
            wid = w["id"]
            done = wait_until(lambda: (lambda x: x if x["state"] == "resolved" else None)(
                work(node, wid)), 60, "the alert's incident to resolve")
            assert done["runs"] and done["runs"][0]["state"] == "succeeded", done["runs"]
            firing = alert_entries(done)
            assert len(firing) == 1 and len(firing[0]["firing"]) == 1, firing
            # The alert ends: Alertmanager's resolved notification annotates the Work.
            alert["endsAt"] = datetime.datetime.now(datetime.timezone.utc).isoformat()
            am_post_alerts(am, [alert])
            w = wait_until(lambda: (lambda x: x if len(alert_entries(x)) == 2 else None)(
                work(node, wid)), 30, "the resolved notification")
            last = alert_entries(w)[-1]
            assert last["resolved"] == firing[0]["firing"] and last["still_firing"] == 0, last
            assert len(works(node)) == 1
        finally:
            stop_alertmanager(am_dir)
        node.stop()


def test_payloads_old_and_new_repeats_and_bad_input():
    with TempDir() as d:
        node = node_for(d).start()
        old = fixture("alertmanager-0.25.json")
        status, _, doc = post(node, old)
        assert status == 201 and doc["created"] and doc["did"] == "opened", doc
        wid = doc["work"]["id"]
        status, _, again = post(node, old)  # Alertmanager's retry or repeat: nothing new
        assert status == 200 and again["work"]["id"] == wid and not again["created"], again
        w = work(node, wid)
        assert len(alert_entries(w)) == 1 and set(alert_entries(w)[0]["firing"]) == {
            "5f8b2a9c3d4e1f07", "9a0b1c2d3e4f5a6b"}, alert_entries(w)
        # One of the two resolves: recorded on the same Work.
        one = json.loads(json.dumps(old))
        one["alerts"][0]["status"] = "resolved"
        one["alerts"][0]["endsAt"] = "2026-12-01T10:20:00Z"
        status, _, doc = post(node, one)
        assert status == 200 and doc["work"]["id"] == wid, doc
        last = alert_entries(work(node, wid))[-1]
        assert last["resolved"] == ["5f8b2a9c3d4e1f07"] and last["still_firing"] == 1, last
        # A newer release's payload (members this build does not know) opens its own group.
        newer = fixture("alertmanager-newer.json")
        status, _, doc = post(node, newer)
        assert status == 201, doc
        w2 = work(node, doc["work"]["id"])
        assert w2["fields"]["service"] == "checkout" and w2["fields"]["severity"] == "sev3", w2
        assert w2["fields"]["summary"] == "checkout's disk is above 90%", w2["fields"]
        assert alert_entries(w2)[0]["truncated"] == 3, alert_entries(w2)
        count = len(works(node))
        bad = [
            (b"{not json", 400, None),
            ({**old, "version": "3"}, 400, "version: expected \"4\""),
            ({**old, "alerts": []}, 400, "alerts: empty"),
            ({**old, "alerts": [{**old["alerts"][0], "fingerprint": 7}]}, 400,
             "alerts[0].fingerprint: expected a string, got number"),
            ({**old, "alerts": [{**old["alerts"][0], "status": "burning"}]}, 400,
             "alerts[0].status: expected firing or resolved"),
            ({**old, "commonLabels": {"service": 1}}, 400, "commonLabels.service: expected a "
             "string"),
            ({**old, "alerts": [{**old["alerts"][0], "startsAt": "yesterday"}]}, 400,
             "alerts[0].startsAt: expected an RFC 3339 time"),
            ({k: v for k, v in old.items() if k != "groupKey"}, 400, "groupKey: required"),
        ]
        for payload, want, detail in bad:
            status, _, doc = post(node, payload)
            assert status == want, (payload if isinstance(payload, bytes) else
                                    str(payload)[:200], status, doc)
            if detail:
                assert detail in doc["detail"], (detail, doc)
        many = {**old, "groupKey": "many", "alerts": [
            {**old["alerts"][0], "fingerprint": f"fp{i}"} for i in range(1001)]}
        status, _, doc = post(node, many)
        assert status == 413 and "max_alerts" in doc["detail"], doc
        status, _, doc = post(node, old, token="wrong-token")
        assert status == 401, doc
        status, _, doc = post(node, {**old, "groupKey": "viewer"}, token="vera-token")
        assert status == 403, doc
        # A group whose alerts cannot fill a required field: 422 naming the field.
        nameless = {**old, "groupKey": "nameless", "commonLabels": {"alertname": "X"},
                    "groupLabels": {}, "alerts": [{**old["alerts"][0], "labels": {
                        "alertname": "X"}, "fingerprint": "nameless"}]}
        status, _, doc = post(node, nameless)
        assert status == 422 and "fields.service" in doc["detail"], doc
        assert len(works(node)) == count
        node.stop()


def am_get(url, path):
    with urllib.request.urlopen(f"{url}{path}", timeout=10) as r:
        return json.loads(r.read())


def test_the_alertmanager_tools_and_a_silence_reconciled_after_kill9():
    """alertmanager.alerts reads the real server; alertmanager.silence puts the call's
    idempotency key in the silence's comment, so that after a kill -9 between the silence and
    its recorded outcome the restarted node finds it instead of silencing twice."""
    with TempDir() as d:
        am, am_dir = start_alertmanager(d, "http://127.0.0.1:9/unused")
        try:
            am_post_alerts(am, [{"labels": {"alertname": "Noisy", "service": "batch"},
                                 "annotations": {"summary": "flapping during maintenance"}}])
            node = Node(d, config_extra=(
                f"alertmanager:\n  url: {am}\n"
                "model:\n  provider: scripted\n  script:\n"
                "    - {tool: alertmanager.silence, args: {labels: {alertname: Noisy, "
                "service: batch}, duration: 30m, comment: maintenance window}}\n"
                "    - {tool: alertmanager.alerts, args: {labels: {alertname: Noisy}}}\n"))
            node.start(env_extra={"SREH_FAILPOINT": "after_effect:1"})
            try:
                node.submit("silence the batch alerts", key="silence-1")
            except (OSError, AssertionError, ValueError):
                pass  # the crash may eat the response
            assert node.wait_exit(timeout=30) == -9, node.log_text()
            node.start()
            rid = node.submit("silence the batch alerts", key="silence-1")
            node.wait_run(rid, states=("succeeded",))
            steps = [s for s in node.steps(rid) if s["kind"] == "tool"]
            silence, alerts = steps[0], steps[1]
            assert silence["tool"] == "alertmanager.silence" and silence["state"] == "succeeded"
            mine = [s for s in am_get(am, "/api/v2/silences")
                    if f"[sreh:{rid}:1]" in s["comment"] and s["status"]["state"] == "active"]
            assert len(mine) == 1, am_get(am, "/api/v2/silences")  # silenced once, not twice
            assert silence["result"]["silence_id"] == mine[0]["id"], silence["result"]
            assert silence["result"].get("reconciled") is True, silence["result"]
            assert mine[0]["comment"].startswith("maintenance window"), mine[0]
            names = [a["labels"]["alertname"] for a in alerts["result"]["alerts"]]
            assert names == ["Noisy"], alerts["result"]
            status, _, tools = node.json("GET", "/v1/tools")
            risk = {t["name"]: (t["risk"], t["mutating"]) for t in tools["tools"]}
            assert risk["alertmanager.silence"] == ("low", True), risk
            assert risk["alertmanager.alerts"] == ("read_only", False), risk
            node.stop()
        finally:
            stop_alertmanager(am_dir)


def test_silences_with_bad_matchers_are_refused():
    """A silence with no matcher, a matcher that matches everything (an empty value) or a label
    name Alertmanager refuses fails as a tool error naming why, and no silence is made."""
    with TempDir() as d:
        am, am_dir = start_alertmanager(d, "http://127.0.0.1:9/unused")
        try:
            bad = [{}, {"service": ""}, {"1-bad name": "x"}, {"service": 3}]
            node = Node(d, config_extra=(
                f"alertmanager:\n  url: {am}\n"
                "model:\n  provider: scripted\n  script:\n" + "".join(
                    f"    - {{tool: alertmanager.silence, args: {{labels: {json.dumps(b)}, "
                    "duration: 30m, comment: bad}}\n" for b in bad))).start()
            rid = node.submit("silence badly", key="bad-silences")
            node.wait_run(rid)
            steps = [s for s in node.steps(rid) if s["kind"] == "tool"]
            assert [s["state"] for s in steps] == ["failed"] * 4, steps
            errors = [s["error"] for s in steps]
            assert "a silence needs at least one matcher" in errors[0], errors[0]
            assert "Alertmanager" in errors[1] and "HTTP 400" in errors[1], errors[1]
            assert "Alertmanager" in errors[2] and "HTTP 400" in errors[2], errors[2]
            assert "labels.service: expected a string" in errors[3], errors[3]
            assert am_get(am, "/api/v2/silences") == [], am_get(am, "/api/v2/silences")
            node.stop()
        finally:
            stop_alertmanager(am_dir)


def test_kill9_while_alertmanager_posts_then_its_retry_lands_once():
    """The node dies (kill -9) in the middle of Alertmanager's post: once after the Work committed
    and before the alerts were merged into it, once after everything committed but before the
    answer. Alertmanager saw no 2xx, so it retries; after the restart the retry lands and exactly
    one Work exists, with the alerts merged once."""
    for point in ("alertmanager_created", "alertmanager_committed"):
        with TempDir() as d:
            node = node_for(d)
            node.start(env_extra={"SREH_FAILPOINT": f"{point}:1"})
            am, am_dir = start_alertmanager(
                d, f"http://127.0.0.1:{node.port}/v1/alerts/alertmanager")
            try:
                am_post_alerts(am, [{
                    "labels": {"alertname": "HighErrorRate", "service": "frontend",
                               "severity": "critical"},
                    "annotations": {"summary": "frontend 5xx above 5% for 5m"}}])
                assert node.wait_exit(timeout=30) == -9, node.log_text()
                node.start()
                w = wait_until(lambda: next(
                    (x for x in works(node) if alert_entries(work(node, x["id"]))), None), 60,
                    f"Alertmanager's retry after the crash at {point}")
                assert len(works(node)) == 1, (point, works(node))
                entries = alert_entries(work(node, w["id"]))
                assert len(entries) == 1 and len(entries[0]["firing"]) == 1, (point, entries)
                node.stop()
            finally:
                stop_alertmanager(am_dir)


if __name__ == "__main__":
    run_tests([
        test_silences_with_bad_matchers_are_refused,
        test_kill9_while_alertmanager_posts_then_its_retry_lands_once,
        test_payloads_old_and_new_repeats_and_bad_input,
        test_real_alertmanager_opens_an_incident_that_resolves,
        test_the_alertmanager_tools_and_a_silence_reconciled_after_kill9,
    ])
