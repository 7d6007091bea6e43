"""API happy paths against a real node: submit, idempotent retry, list paging and filters, steps,
cancel, health, restart durability, and the CLI client.

Two nodes: A runs a quick plan (echo, then a 200 ms sleep); B runs a plan whose second step sleeps
for 30 s, so its runs stay running until cancelled.
"""

import http.client
import json
import os
import re
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from harness import Node, TempDir, run_tests, sreh_cli, sse_events  # noqa: E402

QUICK = """model:
  provider: scripted
  script:
    - {tool: test.echo, args: {service: checkout}}
    - {tool: test.sleep, args: {ms: 200}}
"""
LONG = """model:
  provider: scripted
  script:
    - {tool: test.echo, args: {service: payments}}
    - {tool: test.sleep, args: {ms: 30000}}
"""
QUICK_CONCLUSION = "script finished: 2 steps"
RUN_ID = re.compile(r"^run_[0-7][0-9A-HJKMNP-TV-Z]{25}$")
ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")
A = B = C = None


def events_of(node, rid, timeout=20):
    return [(int(i), k, json.loads(d)) for i, k, d in
            sse_events(node.port, f"/v1/runs/{rid}/events", timeout=timeout)]


def wait_for_event(node, rid, pred, timeout=20):
    """Follows the run's stream until an event satisfies `pred` (no sleeps)."""
    for i, k, d in sse_events(node.port, f"/v1/runs/{rid}/events", timeout=timeout):
        if pred(k, json.loads(d)):
            return
    raise AssertionError(f"{rid}: stream ended before the awaited event")


def all_runs(node, limit=500, **params):
    q = "&".join([f"limit={limit}"] + [f"{k}={v}" for k, v in params.items()])
    status, _, doc = node.json("GET", f"/v1/runs?{q}")
    assert status == 200, f"list: {status} {doc}"
    return doc


# -- submit ------------------------------------------------------------------------------------

def test_submit_created():
    body = {"goal": "  checkout p99 latency is high  ", "labels": {"service": "checkout",
                                                                   "env": "prod"},
            "budget": {"max_steps": 7}}
    status, hdrs, doc = A.json("POST", "/v1/goals", body)
    assert status == 201, f"submit: {status} {doc}"
    assert hdrs["content-type"].startswith("application/json"), hdrs
    assert hdrs.get("x-request-id"), hdrs
    run = doc["run"]
    rid = run["id"]
    assert RUN_ID.match(rid), rid
    assert hdrs.get("location") == f"/v1/runs/{rid}", hdrs.get("location")
    assert run["goal"] == "checkout p99 latency is high", run["goal"]
    assert run["state"] in ("pending", "running"), run["state"]
    assert run["labels"] == {"service": "checkout", "env": "prod"}, run["labels"]
    assert run["budget"]["max_steps"] == 7, run["budget"]
    assert run["idempotency_key"] is None
    assert run["submitter"] and ISO.match(run["created_at"]), run
    assert run["conclusion"] is None and run["error"] is None, run
    assert run["quality"] is None, run  # scored when it ends
    status, _, got = A.json("GET", hdrs["location"])
    assert status == 200 and got["id"] == rid and got["goal"] == run["goal"], got
    done = A.wait_run(rid, states=("succeeded",))
    assert done["conclusion"] == QUICK_CONCLUSION, done
    assert done["steps"] == 3 and done["error"] is None, done
    assert 0 <= done["quality"]["total"] <= 100, done
    assert done["created_at"] == run["created_at"] and done["updated_at"] >= run["created_at"]
    assert done["labels"] == run["labels"] and done["budget"] == run["budget"]


def test_idempotent_retry():
    before = A.stats()["store"]["runs"]
    key = "api-retry-1"
    status, hdrs, first = A.json("POST", "/v1/goals", {"goal": "retry me"}, {"Idempotency-Key": key})
    assert status == 201, first
    rid = first["run"]["id"]
    assert first["run"]["idempotency_key"] == key
    for _ in range(3):
        status, _, again = A.json("POST", "/v1/goals", {"goal": "retry me"},
                                  {"Idempotency-Key": key})
        assert status == 200, f"retry: {status} {again}"
        assert again["run"]["id"] == rid, f"retry named {again['run']['id']}, wanted {rid}"
    A.wait_run(rid)
    status, _, late = A.json("POST", "/v1/goals", {"goal": "retry me"}, {"Idempotency-Key": key})
    assert status == 200 and late["run"]["id"] == rid and late["run"]["state"] == "succeeded", late
    assert A.stats()["store"]["runs"] == before + 1, "a retry created another run"
    # a different key is a different run
    other = A.submit("retry me", key="api-retry-2")
    assert other != rid
    A.wait_run(other)


# -- list --------------------------------------------------------------------------------------

def test_list_paging():
    mine = [A.submit(f"paging {i}") for i in range(7)]
    for rid in mine:
        A.wait_run(rid)
    total = A.stats()["store"]["runs"]
    seen, pages, cursor = [], 0, None
    while True:
        path = "/v1/runs?limit=3" + (f"&cursor={cursor}" if cursor else "")
        status, _, page = A.json("GET", path)
        assert status == 200, page
        pages += 1
        assert len(page["runs"]) <= 3, f"page of {len(page['runs'])}"
        seen += [r["id"] for r in page["runs"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
        assert len(page["runs"]) == 3, "a short page that still has a next_cursor"
        assert pages < 100, "paging never ends"
    assert len(seen) == len(set(seen)), f"duplicates across pages: {seen}"
    assert set(mine) <= set(seen), f"missing: {set(mine) - set(seen)}"
    assert len(seen) == total, f"saw {len(seen)} runs, the store has {total}"
    assert pages == -(-total // 3) or (total % 3 == 0 and pages == total // 3 + 1), \
        f"{pages} pages for {total} runs"
    assert seen == sorted(seen, reverse=True), "pages are not in a stable (newest first) order"
    # the unpaged list agrees
    assert [r["id"] for r in all_runs(A)["runs"]] == seen


def test_list_state_filter():
    ok = all_runs(A, state="succeeded")["runs"]
    assert ok and all(r["state"] == "succeeded" for r in ok), [r["state"] for r in ok]
    everything = all_runs(A)["runs"]
    assert len(ok) == sum(1 for r in everything if r["state"] == "succeeded")
    assert all_runs(A, state="cancelled")["runs"] == []
    rid = B.submit("stays running")
    wait_for_event(B, rid, lambda k, d: k == "step.intent" and d["data"]["n"] == 2)
    running = [r["id"] for r in all_runs(B, state="running")["runs"]]
    assert rid in running, f"{rid} not in state=running: {running}"
    assert rid not in [r["id"] for r in all_runs(B, state="succeeded")["runs"]]
    status, _, _ = B.json("POST", f"/v1/runs/{rid}/cancel")
    assert status == 200
    B.wait_run(rid, states=("cancelled",))
    assert rid in [r["id"] for r in all_runs(B, state="cancelled")["runs"]]
    assert rid not in [r["id"] for r in all_runs(B, state="running")["runs"]]


# -- steps -------------------------------------------------------------------------------------

def test_steps_shape():
    rid = A.submit("steps shape")
    A.wait_run(rid, states=("succeeded",))
    status, hdrs, doc = A.json("GET", f"/v1/runs/{rid}/steps")
    assert status == 200 and doc["run_id"] == rid, doc
    steps = doc["steps"]
    assert [s["n"] for s in steps] == [1, 2, 3], steps
    assert [s["kind"] for s in steps] == ["tool", "tool", "conclude"]
    assert [s["tool"] for s in steps] == ["test.echo", "test.sleep", None]
    assert steps[0]["args"] == {"service": "checkout"} and steps[1]["args"] == {"ms": 200}
    for s in steps:
        assert s["run_id"] == rid and s["state"] == "succeeded", s
        # intent side
        assert isinstance(s["decision"], dict) and s["decision"].get("thought"), s
        # outcome side
        assert s["error"] is None and isinstance(s["result"], dict), s
        assert s["result_truncated"] is False and s["attempts"] == 1, s
        assert ISO.match(s["started_at"]) and ISO.match(s["finished_at"]), s
        assert s["finished_at"] >= s["started_at"], s
    for s in steps[:2]:
        assert s["idempotency_key"] == f"{rid}:{s['n']}", s["idempotency_key"]
    assert steps[0]["result"]["echo"] == {"service": "checkout"}, steps[0]["result"]
    assert steps[1]["result"]["slept_ms"] == 200, steps[1]["result"]
    assert steps[2]["result"]["conclusion"] == QUICK_CONCLUSION
    # the events say the same: one intent and one outcome per tool step, in step order
    evs = events_of(A, rid)
    intents = [d["data"]["n"] for _, k, d in evs if k == "step.intent"]
    outcomes = [d["data"]["n"] for _, k, d in evs if k == "step.outcome"]
    assert intents == [1, 2] and outcomes == [1, 2, 3], (intents, outcomes)
    # the quality score, stored when the run ended: the script's conclusion cites no step
    status, _, run = A.json("GET", f"/v1/runs/{rid}")
    q = run["quality"]
    assert [p["name"] for p in q["parts"]] == ["evidence", "hypotheses", "waste", "safety",
                                               "budget"], q
    parts = {p["name"]: p for p in q["parts"]}
    assert parts["evidence"]["score"] == 0, q
    assert parts["evidence"]["reasons"] == ["the conclusion cites no step that supports it"], q
    assert parts["waste"]["score"] == 100 and parts["safety"]["score"] == 100, q
    assert q["total"] == round(sum(p["weight"] * p["score"] for p in q["parts"])), q


# -- cancel ------------------------------------------------------------------------------------

def test_cancel_running():
    rid = B.submit("cancel me")
    wait_for_event(B, rid, lambda k, d: k == "step.intent" and d["data"]["tool"] == "test.sleep")
    assert B.run(rid)["state"] == "running"
    t0 = time.time()
    status, hdrs, doc = B.json("POST", f"/v1/runs/{rid}/cancel")
    assert status == 200, f"cancel: {status} {doc}"
    r = B.wait_run(rid, states=("cancelled",), timeout=10)
    took = time.time() - t0
    assert took < 5, f"cancel took {took:.1f}s: the 30 s sleep was not interrupted"
    assert doc["run"]["id"] == rid and doc["run"]["state"] in ("cancelled", "running"), doc
    assert r["state"] == "cancelled" and r["conclusion"] is None, r
    steps = B.steps(rid)
    sleep = [s for s in steps if s["tool"] == "test.sleep"]
    assert len(sleep) == 1, steps
    s = sleep[0]
    assert s["state"] in ("cancelled", "failed"), s
    assert "cancel" in (s["error"] or "").lower() or s["state"] == "cancelled", s
    assert s["finished_at"] is not None
    assert "slept_ms" not in (s["result"] or {}), f"the sleep claims to have finished: {s}"
    evs = events_of(B, rid)
    kinds = [k for _, k, _ in evs]
    assert kinds[-1] == "run.cancelled", kinds
    assert "run.succeeded" not in kinds and "run.failed" not in kinds, kinds
    outcome = [d for _, k, d in evs if k == "step.outcome" and d["data"]["n"] == s["n"]]
    assert len(outcome) == 1 and "cancel" in json.dumps(outcome[0]["data"]).lower(), outcome
    assert [d["run_seq"] for _, _, d in evs] == list(range(1, len(evs) + 1))
    # cancel again: 409 naming the run, and nothing changes
    before = B.stats()["store"]
    status, hdrs, doc = B.json("POST", f"/v1/runs/{rid}/cancel")
    assert status == 409, f"second cancel: {status} {doc}"
    assert hdrs["content-type"].startswith("application/problem+json"), hdrs
    assert rid in doc["detail"] and "ended" in doc["detail"], doc
    assert B.stats()["store"] == before
    assert events_of(B, rid) == evs, "a second cancel changed the run's events"


def test_cancel_finished_run_409():
    rid = A.submit("finished before cancel")
    A.wait_run(rid, states=("succeeded",))
    status, hdrs, doc = A.json("POST", f"/v1/runs/{rid}/cancel")
    assert status == 409 and "succeeded" in doc["detail"], f"{status} {doc}"
    assert A.run(rid)["state"] == "succeeded"


# -- health ------------------------------------------------------------------------------------

def test_health():
    for path in ("/healthz", "/readyz"):
        status, hdrs, doc = A.json("GET", path)
        assert status == 200, f"{path}: {status} {doc}"
        assert doc["status"] in ("ok", "ready"), doc
        assert hdrs.get("x-request-id"), hdrs
    st = A.stats()
    assert st["kernel"]["ready"] is True, st
    assert st["store"]["runs"] >= 1 and st["store"]["last_event_seq"] >= st["store"]["events"] > 0
    # HEAD (what load balancers probe with): the GET's headers, no body, the connection reusable.
    conn = http.client.HTTPConnection("127.0.0.1", A.port, timeout=10)
    try:
        conn.request("HEAD", "/healthz")
        r = conn.getresponse()
        assert r.status == 200 and r.read() == b"", r.status
        assert r.getheader("Content-Length") == str(len('{"status":"ok"}')), r.getheaders()
        conn.request("GET", "/healthz")
        r = conn.getresponse()
        assert r.status == 200 and json.loads(r.read()) == {"status": "ok"}
        conn.request("HEAD", "/v1/events", headers={"Authorization": f"Bearer {A.token}"})
        r = conn.getresponse()
        r.read()
        assert r.status == 405 and r.getheader("Allow") == "GET", r.status  # streams have no HEAD
    finally:
        conn.close()


# -- restart -----------------------------------------------------------------------------------

def test_restart_keeps_runs_and_events():
    # one run is mid-flight (inside its 200 ms sleep) when SIGTERM arrives
    inflight = A.submit("in flight at restart")
    wait_for_event(A, inflight, lambda k, d: k == "step.intent" and d["data"]["n"] == 2)
    runs_before = {r["id"]: r for r in all_runs(A)["runs"]}
    finished = [rid for rid, r in runs_before.items() if r["state"] in ("succeeded", "cancelled")]
    events_before = {rid: events_of(A, rid) for rid in finished}
    steps_before = {rid: A.steps(rid) for rid in finished}
    A.stop()
    assert A.proc.returncode == 0, f"SIGTERM exit code {A.proc.returncode}\n{A.log_text()}"
    A.start()
    runs_after = {r["id"]: r for r in all_runs(A)["runs"]}
    assert set(runs_after) == set(runs_before), \
        f"runs lost {set(runs_before) - set(runs_after)} / gained {set(runs_after) - set(runs_before)}"
    for rid in finished:
        assert runs_after[rid] == runs_before[rid], f"{rid} changed across the restart"
        assert events_of(A, rid) == events_before[rid], f"{rid}: events changed"
        assert A.steps(rid) == steps_before[rid], f"{rid}: steps changed"
    # the in-flight run finishes after the restart, every event once
    r = A.wait_run(inflight, states=("succeeded",))
    assert r["conclusion"] == QUICK_CONCLUSION
    evs = events_of(A, inflight)
    assert [d["run_seq"] for _, _, d in evs] == list(range(1, len(evs) + 1)), evs
    assert [k for _, k, _ in evs].count("run.succeeded") == 1
    # new runs continue the node-wide sequence; no id is reused
    last = max(e[0] for v in events_before.values() for e in v)
    fresh = A.submit("after restart")
    A.wait_run(fresh, states=("succeeded",))
    assert min(e[0] for e in events_of(A, fresh)) > last


def test_sigterm_with_inflight_tool_stops_promptly():
    """SIGTERM while a run sits in a cancellable 30 s test.sleep: the node should stop promptly
    (the in-flight tool interrupted, the run left for recovery) and, after a restart, the run is
    still there and can be cancelled. Bound: 10 s to exit (the harness allows 20)."""
    rid = B.submit("in a long sleep at SIGTERM")
    wait_for_event(B, rid, lambda k, d: k == "step.intent" and d["data"]["tool"] == "test.sleep")
    t0 = time.time()
    B.proc.send_signal(signal.SIGTERM)
    try:
        rc = B.proc.wait(timeout=10)
        took = time.time() - t0
    except subprocess.TimeoutExpired:
        B.kill9()
        rc, took = None, time.time() - t0
    try:
        assert rc is not None, ("SIGTERM with a run inside a 30 s test.sleep: the node had not "
                                f"exited after {took:.1f}s (it waits for the in-flight tool)")
        assert rc == 0, f"SIGTERM exit code {rc}"
    finally:
        B.start()
        assert B.run(rid)["state"] not in ("succeeded", "failed"), B.run(rid)
        status, _, _ = B.json("POST", f"/v1/runs/{rid}/cancel")
        assert status == 200
        B.wait_run(rid, states=("cancelled",), timeout=10)


# -- CLI ---------------------------------------------------------------------------------------

def test_cli_submit_watch():
    srv = f"127.0.0.1:{A.port}"
    rc, out, err = sreh_cli(["submit", "cli goal from the test", "--server", srv, "--watch"])
    assert rc == 0, f"submit --watch exited {rc}: {out}{err}"
    assert QUICK_CONCLUSION in out, f"conclusion not printed: {out!r}"
    m = RUN_ID.pattern.strip("^$")
    ids = re.findall(m, out + err)
    assert ids, f"no run id in the output: {out!r}"
    r = A.run(ids[0])
    assert r["goal"] == "cli goal from the test" and r["state"] == "succeeded", r


def test_cli_show_and_runs():
    srv = f"127.0.0.1:{A.port}"
    rid = A.submit("shown by the cli")
    A.wait_run(rid)
    rc, out, err = sreh_cli(["show", rid, "--server", srv])
    assert rc == 0, f"show: {rc} {err}"
    assert rid in out and "succeeded" in out and "shown by the cli" in out, out
    assert "test.echo" in out and "test.sleep" in out, f"show lacks the steps: {out}"
    assert re.search(r"quality:\s+\d+/100", out) and "the conclusion cites no step" in out, out
    rc, out, err = sreh_cli(["runs", "--server", srv])
    assert rc == 0, f"runs: {rc} {err}"
    line = [ln for ln in out.splitlines() if rid in ln]
    assert line and "succeeded" in line[0], f"runs output lacks {rid}: {out}"
    rc, out, err = sreh_cli(["runs", "--state", "succeeded"], env_extra={"SREH_SERVER": srv})
    assert rc == 0 and rid in out, f"runs via SREH_SERVER: {rc} {out}{err}"


def test_cli_cancel():
    srv = f"127.0.0.1:{A.port}"
    rid = A.submit("cli cancel of an ended run")
    A.wait_run(rid, states=("succeeded",))
    rc, out, err = sreh_cli(["cancel", rid, "--server", srv])
    assert rc == 1, f"cancel of an ended run exited {rc}: {out}{err}"
    assert "already ended" in err and rid in err, f"problem detail not printed: {err!r}"
    # cancelling a running run on B works
    brid = B.submit("cli cancels this")
    wait_for_event(B, brid, lambda k, d: k == "step.intent" and d["data"]["n"] == 2)
    rc, out, err = sreh_cli(["cancel", brid, "--server", f"127.0.0.1:{B.port}"])
    assert rc == 0, f"cancel of a running run exited {rc}: {out}{err}"
    B.wait_run(brid, states=("cancelled",), timeout=10)


def test_tools_listing():
    status, _, doc = A.json("GET", "/v1/tools")
    assert status == 200, f"GET /v1/tools: {status} {doc}"
    tools = {t["name"]: t for t in doc["tools"]}
    echo, record = tools["test.echo"], tools["test.record"]
    assert echo["risk"] == "read_only" and echo["mutating"] is False and echo["idempotent"], echo
    assert record["mutating"] is True and record["idempotent"] is False, record
    sleep = tools["test.sleep"]["schema"]
    assert sleep["type"] == "object" and "ms" in sleep["properties"], f"schema not served: {sleep}"
    assert all(t["description"] for t in doc["tools"]), doc
    rc, out, err = sreh_cli(["tools", "--server", f"127.0.0.1:{A.port}"])
    assert rc == 0, f"sreh tools: {rc} {err}"
    row = [ln for ln in out.splitlines() if ln.startswith("test.record ")]
    assert row and " yes " in row[0], f"sreh tools lacks test.record as mutating: {out}"


def test_no_test_tools_by_default():
    """A node whose config does not ask for the testkit offers no test tools, and a run that
    calls one fails naming the tool."""
    status, _, doc = C.json("GET", "/v1/tools")
    assert status == 200, f"GET /v1/tools: {status} {doc}"
    names = [t["name"] for t in doc["tools"]]
    assert not [n for n in names if n.startswith("test.")], f"test tools on a default node: {names}"
    rid = C.submit("calls a test tool that is not there")
    run = C.wait_run(rid, states=("failed", "succeeded"))
    status, _, steps = C.json("GET", f"/v1/runs/{rid}/steps")
    text = json.dumps(steps)
    assert "test.echo" in text and "unknown" in text.lower(), f"no unknown-tool error: {text}"


def test_cli_errors():
    rc, out, err = sreh_cli(["runs", "--server", "127.0.0.1:1"])
    assert rc == 3 and "cannot reach" in err, f"unreachable: {rc} {out!r} {err!r}"
    rc, out, err = sreh_cli(["bogus"])
    assert rc == 2 and "bogus" in err, f"bogus command: {rc} {err!r}"
    rc, out, err = sreh_cli(["show", "run_00000000000000000000000000",
                             "--server", f"127.0.0.1:{A.port}"])
    assert rc == 1 and "not found" in err, f"show unknown run: {rc} {out!r} {err!r}"
    rc, out, err = sreh_cli(["show", "not-a-run", "--server", f"127.0.0.1:{A.port}"])
    assert rc in (1, 2) and "not-a-run" in err, f"show malformed id: {rc} {out!r} {err!r}"


if __name__ == "__main__":
    code = 1
    with TempDir() as d:
        os.makedirs(os.path.join(d, "a"))
        os.makedirs(os.path.join(d, "b"))
        A = Node(os.path.join(d, "a"), QUICK).start()
        B = Node(os.path.join(d, "b"), LONG).start()
        os.makedirs(os.path.join(d, "c"))
        C = Node(os.path.join(d, "c"), QUICK, testkit=False).start()
        try:
            run_tests([test_submit_created, test_idempotent_retry, test_list_paging,
                       test_list_state_filter, test_steps_shape, test_cancel_running,
                       test_cancel_finished_run_409, test_health, test_restart_keeps_runs_and_events,
                       test_sigterm_with_inflight_tool_stops_promptly,
                       test_cli_submit_watch, test_cli_show_and_runs, test_cli_cancel,
                       test_tools_listing, test_no_test_tools_by_default, test_cli_errors])
        except SystemExit as e:
            code = e.code
        A.stop()
        B.stop()
        C.stop()
    sys.exit(code)
