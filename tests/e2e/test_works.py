"""Works on a real node: a Work made from examples/templates/incident.yaml over HTTP runs the
sandbox incident and resolves when its done-criteria hold for their window (of world time);
each double-texting policy on a second trigger; kill -9 while a Work waits on an SLA timer and
while its run is mid-step; bad input that changes nothing; world state with its history; a comment
reaching the active run as a constraint (across a kill -9), and a new run starting with the Work's
story in its model request."""

import json
import os
import shutil
import time

from harness import TOKEN, Node, TempDir, auth_block, run_tests, sreh_cli, sse_events, wait_until
from cluster_harness import SOURCE
from model_server import ModelServer

EXAMPLES = os.path.join(SOURCE, "examples")
DEMO = os.path.join(EXAMPLES, "scenarios", "shop-checkout-bad-deploy.yaml")
INCIDENT = os.path.join(EXAMPLES, "templates", "incident.yaml")


def works_config(tdir, extra=""):
    return (f"works:\n  templates: {tdir}\n  check_every: 1s\n  world_sync: 1s\n" + extra)


def demo_node(d, extra="", model="", testkit=False):
    tdir = os.path.join(d, "templates")
    os.makedirs(tdir, exist_ok=True)
    shutil.copy(INCIDENT, tdir)
    return Node(d, testkit=testkit,
                config_extra=works_config(tdir) +
                f"sandbox:\n  scenario: {DEMO}\n  time_scale: 60\n" + model + extra)


def template_file(tdir, name, double_texting, extra=""):
    with open(os.path.join(tdir, f"{name}.yaml"), "w") as f:
        f.write(f"template: {name}\nkind: change\n"
                "fields:\n  target: {type: string, required: true}\n"
                "  rollback: {type: string, default: redeploy the previous version}\n"
                "run: {goal: \"change {target}\"}\n"
                f"double_texting: {double_texting}\n" + extra)


def create(node, template, fields, key=None):
    headers = {"Idempotency-Key": key} if key else {}
    return node.json("POST", "/v1/works", {"template": template, "fields": fields}, headers)


def work(node, wid):
    status, _, doc = node.json("GET", f"/v1/works/{wid}")
    assert status == 200, doc
    return doc["work"]


def wait_work(node, wid, pred, timeout, what):
    return wait_until(lambda: (lambda w: w if pred(w) else None)(work(node, wid)), timeout, what)


def kinds(w):
    return [e["kind"] for e in w["timeline"]]


def test_an_incident_work_resolves_on_the_demo_scenario():
    with TempDir() as d:
        node = demo_node(d).start()
        started = time.time()
        status, hdrs, doc = create(node, "incident",
                                   {"service": "frontend", "alert": "HighErrorRate",
                                    "summary": "frontend 5xx above 5%", "severity": "sev2"},
                                   key="alert-1")
        assert status == 201, doc
        w = doc["work"]
        wid = w["id"]
        assert hdrs["location"] == f"/v1/works/{wid}"
        assert w["template"] == "incident" and w["kind"] == "incident" and w["severity"] == "sev2"
        assert w["title"] == "frontend: frontend 5xx above 5%", w["title"]
        assert w["fields"]["service"] == "frontend" and w["fields"]["alert"] == "HighErrorRate"
        assert [c["clock"] for c in w["sla"]] == ["acknowledge", "mitigate", "resolve"], w["sla"]
        # A repeated key names the same Work.
        status, _, again = create(node, "incident", {"service": "frontend",
                                                     "summary": "frontend 5xx above 5%"},
                                  key="alert-1")
        assert status == 200 and again["work"]["id"] == wid, again
        done = wait_work(node, wid, lambda w: w["state"] == "resolved", 60, "the work resolved")
        elapsed = time.time() - started
        assert elapsed < 60, elapsed
        runs = done["runs"]
        assert len(runs) == 1 and runs[0]["state"] == "succeeded", runs
        run = node.run(runs[0]["id"])
        assert run["labels"]["work"] == wid and run["labels"]["service"] == "frontend", run
        states = [(e["data"]["from"], e["data"]["to"]) for e in done["timeline"]
                  if e["kind"] == "work.transition"]
        assert states == [("open", "mitigating"), ("mitigating", "monitoring"),
                          ("monitoring", "resolved")], states
        k = kinds(done)
        assert k[0] == "work.created" and "work.run_started" in k and "work.run_ended" in k, k
        assert done["resolved_at"] and done["mitigated_at"], done
        # The world state: the rollback is a version of checkout made by the run's action.
        status, _, world = node.json("GET", "/v1/world")
        assert status == 200, world
        ids = {e["id"]: e for e in world["entities"]}
        assert "checkout" in ids and "frontend" in ids, sorted(ids)
        assert {"from": "frontend", "to": "checkout", "kind": "depends_on"} in world["edges"]
        status, _, ent = node.json("GET", "/v1/world/entities/checkout")
        assert status == 200, ent
        by_action = [v for v in ent["history"] if v["source"] == "action"]
        assert any("deploy.rollback" in v["changed_by"] and runs[0]["id"] in v["changed_by"]
                   for v in by_action), ent["history"]
        assert ent["entity"]["props"]["version"] != "v2.4.1", ent["entity"]
        # Reasoners read it too: the world.get tool (read-only) with an entity's neighbours.
        status, _, tools = node.json("GET", "/v1/tools")
        wt = [t for t in tools["tools"] if t["name"] == "world.get"]
        assert wt and wt[0]["risk"] == "read_only" and not wt[0]["mutating"], tools
        status, _, missing = node.json("GET", "/v1/world/entities/nothing-here")
        assert status == 404 and "nothing-here" in missing["detail"], missing
        # Listing with filters, and the CLI.
        status, _, page = node.json("GET", "/v1/works?state=resolved&kind=incident&label=service=frontend")
        assert status == 200 and [x["id"] for x in page["works"]] == [wid], page
        status, _, page = node.json("GET", "/v1/works?state=open")
        assert status == 200 and page["works"] == [], page
        code, out, err = sreh_cli(["work", "show", wid, "--server", f"127.0.0.1:{node.port}"])
        assert code == 0, err
        assert "resolved" in out and "work.run_started" in out and runs[0]["id"] in out, out
        code, out, err = sreh_cli(["works", "--server", f"127.0.0.1:{node.port}"])
        assert code == 0 and wid in out, (out, err)
        # The timeline on the SSE stream of the Work, and on the firehose by kind.
        evs = list(sse_events(node.port, f"/v1/works/{wid}/events", timeout=10,
                              stop_after=len(done["timeline"])))
        assert [e[1] for e in evs] == kinds(done), evs
        evs = list(sse_events(node.port, "/v1/events?kind=work.", timeout=10,
                              stop_after=len(done["timeline"])))
        assert evs and all(json.loads(e[2])["run_id"] == wid for e in evs), evs
        node.stop()


def test_a_second_trigger_follows_the_double_texting_policy():
    with TempDir() as d:
        tdir = os.path.join(d, "templates")
        os.makedirs(tdir)
        for policy in ("enqueue", "join", "interrupt", "reject"):
            template_file(tdir, policy, policy)
        node = Node(d, config_extra=works_config(tdir) +
                    "model:\n  provider: scripted\n  script:\n"
                    "    - {tool: test.sleep, args: {ms: 1500}}\n").start()
        made = {}
        for policy in ("enqueue", "join", "interrupt", "reject"):
            status, _, doc = create(node, policy, {"target": "db"})
            assert status == 201, doc
            made[policy] = doc["work"]["id"]
        for policy, wid in made.items():
            wait_work(node, wid, lambda w: w["active_run"], 20, f"{policy}: its run started")
        results = {}
        for policy, wid in made.items():
            results[policy] = node.json("POST", f"/v1/works/{wid}/trigger",
                                        {"text": "the alert fired again"})
        status, _, doc = results["reject"]
        assert status == 409 and "double_texting is reject" in doc["detail"], doc
        assert kinds(work(node, made["reject"])).count("work.triggered") == 0
        for policy in ("enqueue", "join", "interrupt"):
            assert results[policy][0] == 200, results[policy]
        # enqueue: a second run after the first; join: the one run; interrupt: the first
        # cancelled, a second started.
        enq = wait_work(node, made["enqueue"], lambda w: len(w["runs"]) == 2 and
                        all(r.get("state") == "succeeded" for r in w["runs"]), 30,
                        "enqueue: two runs, one after the other")
        first, second = enq["runs"]
        assert node.run(first["id"])["updated_at"] <= node.run(second["id"])["created_at"]
        intr = wait_work(node, made["interrupt"], lambda w: len(w["runs"]) == 2 and
                         w["runs"][0].get("state") == "cancelled", 30,
                         "interrupt: the first run cancelled and a second one")
        assert intr["runs"][1].get("state") in ("running", "succeeded"), intr["runs"]
        joined = wait_work(node, made["join"], lambda w: not w["active_run"], 30,
                           "join: its run ended")
        assert len(joined["runs"]) == 1, joined["runs"]
        trig = [e for e in joined["timeline"] if e["kind"] == "work.triggered"]
        assert len(trig) == 1 and trig[0]["data"]["action"] == "attach", trig
        assert trig[0]["data"]["text"] == "the alert fired again"
        node.stop()


def test_bad_input_gets_a_problem_and_changes_nothing():
    with TempDir() as d:
        tdir = os.path.join(d, "templates")
        os.makedirs(tdir)
        shutil.copy(INCIDENT, tdir)
        node = Node(d, config_extra=works_config(tdir),
                    auth=auth_block({"e2e-admin": ("admin", TOKEN),
                                     "vera": ("viewer", "vera-token")})).start()

        def count():
            status, _, page = node.json("GET", "/v1/works?limit=500")
            assert status == 200, page
            return len(page["works"])

        cases = [
            ({"template": "incident", "fields": {"summary": "x"}}, 400, "fields.service"),
            ({"template": "incident", "fields": {"service": 3, "summary": "x"}}, 400,
             "fields.service: expected a string"),
            ({"template": "incident", "fields": {"service": "a", "summary": "x",
                                                 "severity": "sev9"}}, 400, "fields.severity"),
            ({"template": "incident", "fields": {"service": "a", "summary": "x", "owner": "me"}},
             400, "owner"),
            ({"template": "outage", "fields": {}}, 400, "no template 'outage' (known: incident)"),
            ({"fields": {}}, 400, "template: required"),
            ({"template": "incident", "fields": []}, 400, "fields: expected an object"),
            ({"template": "incident", "colour": "red"}, 400, "unknown field 'colour'"),
        ]
        for body, want_status, want in cases:
            status, _, doc = node.json("POST", "/v1/works", body)
            assert status == want_status and want in doc["detail"], (body, status, doc)
        status, _, doc = node.json("POST", "/v1/works", b"{not json",
                                   {"Content-Type": "application/json"})
        assert status == 400, doc
        assert count() == 0
        status, _, doc = create(node, "incident", {"service": "a", "summary": "x"}, key="k1")
        assert status == 201, doc
        wid = doc["work"]["id"]
        status, _, doc = node.json("POST", f"/v1/works/{wid}/cancel", {"text": "false alarm"})
        assert status == 200 and doc["work"]["state"] == "cancelled", doc
        before = work(node, wid)
        status, _, doc = node.json("POST", f"/v1/works/{wid}/resolve")
        assert status == 409 and "cannot resolve a work that is cancelled" in doc["detail"], doc
        status, _, doc = node.json("POST", f"/v1/works/{wid}/explode")
        assert status == 404 and "no command 'explode'" in doc["detail"], doc
        status, _, doc = node.json("POST", f"/v1/works/{wid}/comment", {"text": 5})
        assert status == 400 and "text: expected a string" in doc["detail"], doc
        status, _, doc = node.json("POST", f"/v1/works/{wid}/comment", {})
        assert status == 400 and "a comment needs text" in doc["detail"], doc
        # Nothing the refused commands did is in the timeline. (The end of the Work's run may
        # land after `before` was read: the run can end just before the cancel, and its end
        # reaches the Work asynchronously.)
        def settled(w):
            return [e for e in w["timeline"] if e["kind"] != "work.run_ended"]
        assert settled(work(node, wid)) == settled(before)
        status, _, doc = node.json("GET", "/v1/works/wrk_nope")
        assert status == 400 and "malformed" in doc["detail"], doc
        status, _, doc = node.json("GET", "/v1/works/wrk_00000000000000000000000000")
        assert status == 404, doc
        status, _, doc = node.json("POST", "/v1/works/wrk_00000000000000000000000000/ack")
        assert status == 404 and "not found" in doc["detail"], doc
        status, _, doc = node.json("GET", "/v1/works?state=burning")
        assert status == 400 and "state: 'burning'" in doc["detail"], doc
        status, _, doc = create(node, "incident", {"service": "b", "summary": "y"}, key="k1")
        assert status == 200 and doc["work"]["id"] == wid, doc
        assert count() == 1
        # Every transition is attributed; a viewer may read but not act.
        moves = [e["data"] for e in work(node, wid)["timeline"] if e["kind"] == "work.transition"]
        assert moves[-1]["to"] == "cancelled" and moves[-1]["by"] == "e2e-admin", moves
        assert moves[-1]["text"] == "false alarm", moves
        status, _, doc = node.json("POST", f"/v1/works/{wid}/reopen", token="vera-token")
        assert status == 403 and "needs operator" in doc["detail"], doc
        status, _, doc = node.json("POST", "/v1/works", {"template": "incident", "fields": {
            "service": "a", "summary": "x"}}, token="vera-token")
        assert status == 403, doc
        status, _, doc = node.json("GET", f"/v1/works/{wid}", token="vera-token")
        assert status == 200 and doc["work"]["state"] == "cancelled", doc
        assert count() == 1
        node.stop()


def test_kill9_while_a_work_waits_on_its_sla_timer():
    with TempDir() as d:
        tdir = os.path.join(d, "templates")
        os.makedirs(tdir)
        template_file(tdir, "slow", "enqueue", "sla: {acknowledge: 3s}\n")
        node = Node(d, config_extra=works_config(tdir) +
                    "model:\n  provider: scripted\n  script:\n"
                    "    - {tool: test.echo, args: {}}\n").start()
        status, _, doc = create(node, "slow", {"target": "x"})
        assert status == 201, doc
        wid = doc["work"]["id"]
        node.kill9()
        time.sleep(3.5)  # the deadline passes while the node is down (not synchronisation)
        node.start()
        w = wait_work(node, wid, lambda w: "work.sla_breached" in kinds(w), 20,
                      "the acknowledge breach announced after the restart")
        breaches = [e for e in w["timeline"] if e["kind"] == "work.sla_breached"]
        assert len(breaches) == 1 and breaches[0]["data"]["clock"] == "acknowledge", breaches
        node.stop()
        node.start()
        status, _, doc = node.json("POST", f"/v1/works/{wid}/comment", {"text": "after restart"})
        assert status == 200, doc
        assert kinds(doc["work"]).count("work.sla_breached") == 1, kinds(doc["work"])
        node.stop()


def test_kill9_while_its_run_is_mid_step_then_the_work_resolves():
    with TempDir() as d:
        node = demo_node(d, testkit=True, model=(
            "model:\n  provider: scripted\n  script:\n"
            "    - {tool: test.sleep, args: {ms: 4000}}\n"
            "    - {tool: deploy.rollback, args: {service: checkout}}\n"))
        node.start()
        status, _, doc = create(node, "incident", {"service": "frontend", "summary": "5xx"})
        assert status == 201, doc
        wid = doc["work"]["id"]
        w = wait_work(node, wid, lambda w: w["active_run"], 20, "its run started")
        rid = w["active_run"]
        wait_until(lambda: any(s["tool"] == "test.sleep" and s["state"] == "intent"
                               for s in node.steps(rid)), 20, "the run mid-step")
        node.kill9()
        node.start()
        w = wait_work(node, wid, lambda w: w["state"] == "resolved", 60,
                      "the work resolved after the restart")
        assert [r["id"] for r in w["runs"]] == [rid], w["runs"]
        assert w["runs"][0]["state"] == "succeeded", w["runs"]
        rollbacks = [s for s in node.steps(rid) if s["tool"] == "deploy.rollback"]
        assert len(rollbacks) == 1 and rollbacks[0]["state"] == "succeeded", rollbacks
        assert kinds(w).count("work.run_started") == 1, kinds(w)
        node.stop()


def test_an_orchestrator_that_dies_is_restarted_and_its_works_go_on():
    with TempDir() as d:
        tdir = os.path.join(d, "templates")
        os.makedirs(tdir)
        template_file(tdir, "slow", "enqueue")
        node = Node(d, config_extra=works_config(tdir) +
                    "model:\n  provider: scripted\n  script:\n"
                    "    - {tool: test.sleep, args: {ms: 1000}}\n",
                    env_extra={"SREH_FAULT": "works.orchestrator:2"}).start()
        status, _, doc = create(node, "slow", {"target": "a"})
        assert status == 201, doc
        first = doc["work"]["id"]
        status, _, doc = create(node, "slow", {"target": "b"})  # the orchestrator throws here
        assert status == 503, (status, doc)

        def restarted():
            status, _, doc = node.json("GET", "/v1/actors")
            row = {a["name"]: a for a in doc["actors"]}.get("orchestrator")
            return row if row and row["restarts"] == 1 and row["state"] == "running" else None
        row = wait_until(restarted, 20, "the orchestrator restarted")
        assert "fault injected at works.orchestrator" in row["last_error"], row
        status, _, doc = create(node, "slow", {"target": "c"})
        assert status == 201, doc
        # The first Work's run ends under the new orchestrator, which hears of it.
        w = wait_work(node, first, lambda w: w["runs"] and w["runs"][0].get("state") ==
                      "succeeded" and not w["active_run"], 20, "the first work's run recorded")
        assert kinds(w).count("work.run_ended") == 1, kinds(w)
        node.stop()


def memories(node, label):
    status, _, doc = node.json("GET", f"/v1/memory?label={label}&kind=postmortem")
    assert status == 200, doc
    return doc["memories"]


def test_a_resolved_work_has_a_postmortem_that_replaces_its_runs():
    with TempDir() as d:
        node = demo_node(d).start()
        status, _, doc = create(node, "incident",
                                {"service": "frontend", "alert": "HighErrorRate",
                                 "summary": "frontend 5xx above 5%"})
        assert status == 201, doc
        wid = doc["work"]["id"]
        # Still open: no postmortem yet.
        status, _, pm = node.json("GET", f"/v1/works/{wid}/postmortem")
        assert status == 409 and f"work {wid} is " in pm["detail"], (status, pm)
        done = wait_work(node, wid, lambda w: w["state"] == "resolved", 60, "the work resolved")
        run_id = done["runs"][0]["id"]
        steps = node.steps(run_id)
        status, _, pm = node.json("GET", f"/v1/works/{wid}/postmortem")
        assert status == 200, (status, pm)
        p = pm["postmortem"]
        assert p["work_id"] == wid and p["outcome"] == "resolved" and "run_id" not in p, p
        assert p["title"] == "frontend: frontend 5xx above 5%: bad_deploy on checkout", p["title"]
        (cause,) = p["root_cause"]
        assert cause["kind"] == "bad_deploy" and cause["target"] == "checkout", cause
        assert cause["run"] == run_id, cause
        for n in cause["evidence_steps"]:
            assert steps[n - 1]["state"] == "succeeded" and steps[n - 1]["kind"] == "tool", n
        (rollback,) = [a for a in p["actions"] if a["tool"] == "deploy.rollback"]
        assert rollback["run"] == run_id and rollback["state"] == "succeeded", rollback
        lines = [(e["run"], e["what"]) for e in p["timeline"]]
        assert lines[0][0] is None and lines[0][1].startswith(
            'Work opened from template incident: "frontend: frontend 5xx above 5%"'), lines[0]
        assert any(r is None and w.startswith("monitoring → resolved") for r, w in lines), lines
        assert any(r == run_id and "deploy.rollback" in w for r, w in lines), lines
        impact = p["impact"]
        assert impact["ended_at"] == done["resolved_at"], (impact, done)
        assert impact["mitigated_at"] and impact["affected"][0] == "frontend", impact
        # In memory, the Work's postmortem replaces its run's.
        (entry,) = wait_until(lambda: memories(node, f"work={wid}") or None, 20,
                              "the Work's postmortem in memory")
        assert entry["labels"]["fault"] == "bad_deploy" and entry["text"].startswith(
            f"frontend: frontend 5xx above 5%: bad_deploy on checkout (work {wid})."), entry
        assert memories(node, f"run={run_id}") == []
        # As Markdown, through the CLI too; bad ids are named.
        code, out, err = sreh_cli(["postmortem", wid, "--server", f"127.0.0.1:{node.port}"])
        assert code == 0 and f"Work `{wid}` (resolved)." in out, (code, out, err)
        assert f"run `{run_id}` step {rollback['step']}" in out, out
        status, _, pm = node.json("GET", "/v1/works/wrk_01JZZZZZZZZZZZZZZZZZZZZZZZ/postmortem")
        assert status == 404 and "work wrk_01JZZZZZZZZZZZZZZZZZZZZZZZ not found" in pm["detail"]
        status, _, pm = node.json("GET", "/v1/works/wrk_nope/postmortem")
        assert status == 400 and "work id 'wrk_nope' is malformed" in pm["detail"], pm
        node.stop()


def test_a_comment_reaches_the_active_run_as_a_constraint_even_across_a_crash():
    """docs/conversation.md, "Works": a comment on a Work is a message of its active run, from the
    commenter. "leave checkout alone" there keeps the run from rolling checkout back — also when
    the node is killed right after the comment is committed and before the run was told: the
    Work's actor tells it at its next start, once."""
    with TempDir() as d:
        node = demo_node(d, extra="  call_delay_ms: 400\n")
        node.start(env_extra={"SREH_FAILPOINT": "after_work_comment:1"})
        status, _, doc = create(node, "incident", {"service": "frontend", "alert": "HighErrorRate",
                                                   "summary": "frontend 5xx above 5%"})
        assert status == 201, doc
        wid = doc["work"]["id"]
        run_id = wait_work(node, wid, lambda w: w["active_run"], 20, "its run started")["active_run"]
        wait_until(lambda: len(node.steps(run_id)) >= 2, 30, "the run's first steps")
        text = "the release is being audited, leave checkout alone"
        try:
            node.json("POST", f"/v1/works/{wid}/comment", {"text": text})
        except Exception:  # noqa: BLE001 - the node dies under the request
            pass
        assert node.wait_exit(30) == -9, "the node did not stop at the failpoint"
        node.start(env_extra={"SREH_FAILPOINT": ""})
        assert kinds(work(node, wid)).count("work.comment") == 1  # committed before the kill
        r = node.wait_run(run_id, timeout=90)
        status, _, msgs = node.json("GET", f"/v1/runs/{run_id}/messages")
        assert status == 200, msgs
        [m] = msgs["messages"]
        assert m["text"] == text and m["author"] == "e2e-admin" and m["taken_step"], m
        assert [c["entity"] for c in node.run(run_id)["constraints"]] == ["checkout"], r
        steps = node.steps(run_id)
        assert not [s for s in steps if s["tool"] == "deploy.rollback"], steps
        assert r["state"] == "succeeded" and "constraint from e2e-admin" in r["conclusion"], r
        # The constraint stands for the Work's next run: it is that run's first message, taken
        # before its first decision, and the run keeps to it.
        status, _, doc = node.json("POST", f"/v1/works/{wid}/trigger", {"text": "errors again"})
        assert status == 200, doc
        w = wait_work(node, wid, lambda w: len(w["runs"]) == 2 and not w["active_run"], 90,
                      "its second run ended")
        second = w["runs"][1]["id"]
        status, _, msgs = node.json("GET", f"/v1/runs/{second}/messages")
        assert status == 200, msgs
        [m2] = msgs["messages"]
        assert m2["text"] == text and m2["author"] == "e2e-admin" and m2["seq"] == 1, m2
        steps2 = node.steps(second)
        first_tool = min(s["n"] for s in steps2 if s["kind"] == "tool" and s["n"] > 1)
        assert 0 < m2["taken_step"] < first_tool, (m2, steps2)
        assert [c["entity"] for c in node.run(second)["constraints"]] == ["checkout"]
        assert not [s for s in steps2 if s["tool"] == "deploy.rollback"], steps2
        r2 = node.run(second)
        assert "constraint from e2e-admin" in r2["conclusion"], r2
        node.stop()


def test_a_retriggered_works_run_starts_with_the_works_story():
    """A new run of a Work starts with the Work, what was said on it and what its earlier runs
    concluded: the model's request has them as the current state, and the run shows them."""
    key = "sk-e2e-works-story"
    answers = [{"text": "Cause: the checkout release v2.4.1 is bad; it needs a rollback."},
               {"text": "Cause: the same checkout release, still deployed."}]
    with TempDir() as d, ModelServer(answers, key) as srv:
        model = (f"model:\n  provider: openai\n  base_url: {srv.url}/v1\n  model: test-model\n"
                 "  api_key: ${E2E_MODEL_KEY}\n")
        node = demo_node(d, model=model).start(env_extra={"E2E_MODEL_KEY": key})
        status, _, doc = create(node, "incident", {"service": "frontend", "alert": "HighErrorRate",
                                                   "summary": "frontend 5xx above 5%"})
        assert status == 201, doc
        wid = doc["work"]["id"]
        w = wait_work(node, wid, lambda w: w["runs"] and not w["active_run"], 30, "its first run ended")
        first = w["runs"][0]["id"]
        assert node.run(first)["state"] == "succeeded"
        said = "the db is being failed over, leave payments-db alone"
        status, _, doc = node.json("POST", f"/v1/works/{wid}/comment", {"text": said})
        assert status == 200, doc
        status, _, doc = node.json("POST", f"/v1/works/{wid}/trigger", {"text": "errors again"})
        assert status == 200, doc
        w = wait_work(node, wid, lambda w: len(w["runs"]) == 2 and not w["active_run"], 30,
                      "its second run ended")
        second = w["runs"][1]["id"]
        assert not srv.violations, srv.violations
        opening = [m["content"] for m in srv.requests[-1][2]["messages"] if m["role"] == "user"][0]
        assert f"Current state:\nWork {wid} (incident, " in opening, opening
        assert f": {said}" in opening and "(triggering a run): errors again" in opening, opening
        assert (f"- {first} succeeded: Cause: the checkout release v2.4.1 is bad" in opening), opening
        first_opening = [m["content"] for m in srv.requests[0][2]["messages"]
                         if m["role"] == "user"][0]
        assert f"Work {wid}" in first_opening and "Earlier runs" not in first_opening
        assert node.run(second)["context"] in opening, node.run(second)
        # The comment's constraint stands: the second run was told it before it began.
        status, _, msgs = node.json("GET", f"/v1/runs/{second}/messages")
        assert [(m["author"], m["text"]) for m in msgs["messages"]] == [("e2e-admin", said)], msgs
        assert [c["entity"] for c in node.run(second)["constraints"]] == ["payments-db"]
        _, _, msgs = node.json("GET", f"/v1/runs/{first}/messages")
        assert msgs["messages"] == [], msgs  # said after the first run ended
        node.stop()


if __name__ == "__main__":
    run_tests([
        test_an_incident_work_resolves_on_the_demo_scenario,
        test_a_second_trigger_follows_the_double_texting_policy,
        test_a_comment_reaches_the_active_run_as_a_constraint_even_across_a_crash,
        test_a_retriggered_works_run_starts_with_the_works_story,
        test_bad_input_gets_a_problem_and_changes_nothing,
        test_kill9_while_a_work_waits_on_its_sla_timer,
        test_kill9_while_its_run_is_mid_step_then_the_work_resolves,
        test_an_orchestrator_that_dies_is_restarted_and_its_works_go_on,
        test_a_resolved_work_has_a_postmortem_that_replaces_its_runs,
    ])
