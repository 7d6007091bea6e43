"""Talking to a run while it works (docs/conversation.md), on the sandbox demo scenario:

- in review mode the run parks on the checkout rollback; "do not touch checkout" withdraws the
  pending approval, a later approve vote executes nothing, and the run concludes naming the
  constraint (without the message the same run rolls back once approved: test_review_mode);
- in autonomous mode, with each tool call slowed down, a message sent while the run
  investigates keeps the rollback from ever being proposed;
- "check cart-cache first" makes cart-cache the next entity the run describes (without the
  message the walk reaches it late), and the run still mitigates;
- "pause" holds the run (across a kill -9) until "resume", and a cancel ends a paused run;
- kill -9 right after a message is committed and before the run sees it: after the restart the
  run takes it exactly once;
- a question is answered from the journal, on an ended run and on a working one, citing the
  steps that support what it says (checked against the journal and the postmortem);
- bad input of every kind is a clear 4xx that changes nothing, and a flood of messages stops at
  the run's limit (429) without harming the run;
- a follow-up of an ended run starts from its conclusion and evidence, and the parent is
  untouched.
"""

import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(__file__))
from harness import Node, TempDir, auth_block, run_tests, sreh_cli, sse_events, wait_until  # noqa: E402

ROOT = os.environ.get("SREH_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
SCENARIO = os.path.abspath(os.path.join(ROOT, "examples", "scenarios",
                                        "shop-checkout-bad-deploy.yaml"))
TOKENS = {"otto": ("operator", "otto-talk-token"), "alice": ("approver", "alice-talk-token"),
          "vera": ("viewer", "vera-talk-token")}
GOAL = "frontend is returning errors; find the cause and mitigate"
LABELS = {"alert": "HighErrorRate", "service": "frontend", "severity": "page"}


def tok(who):
    return TOKENS[who][1]


def node(d, mode, delay_ms=0, env_extra=None):
    cfg = (f"policy_mode: {mode}\nmodel: {{provider: builtin}}\n"
           f"sandbox: {{scenario: {SCENARIO}, call_delay_ms: {delay_ms}}}\n")
    n = Node(d, cfg, auth=auth_block(TOKENS), token=tok("otto"))
    return n.start(env_extra=env_extra)


def submit(n):
    status, _, doc = n.json("POST", "/v1/goals", {"goal": GOAL, "labels": LABELS}, token=tok("otto"))
    assert status == 201, (status, doc)
    return doc["run"]["id"]


def say(n, run_id, text, who="otto", key=None):
    headers = {"Idempotency-Key": key} if key else None
    return n.json("POST", f"/v1/runs/{run_id}/messages", {"text": text}, headers=headers,
                  token=tok(who))


def messages(n, run_id):
    status, _, doc = n.json("GET", f"/v1/runs/{run_id}/messages", token=tok("vera"))
    assert status == 200, (status, doc)
    return doc["messages"]


def wait_for_approval(n, run_id):
    for _, kind, data in sse_events(n.port, f"/v1/runs/{run_id}/events", timeout=60,
                                    token=tok("otto")):
        if kind == "approval.requested":
            return json.loads(data)["data"]["approval"]
        assert kind not in ("run.succeeded", "run.failed"), f"run ended without approval: {kind}"
    raise AssertionError("the run never asked for approval")


def wait_for_step(n, run_id, count):
    wait_until(lambda: len(n.steps(run_id)) >= count, 60, f"{count} steps of {run_id}")


def message_steps(n, run_id):
    return [s for s in n.steps(run_id) if s["kind"] == "message"]


def said_mid_investigation(d, text):
    """A node in autonomous mode with slow tools, its run two steps in, and `text` said to it:
    the node, the run and the message's answer."""
    n = node(d, "autonomous", delay_ms=150)
    run_id = submit(n)
    wait_for_step(n, run_id, 2)
    status, _, doc = say(n, run_id, text)
    assert status == 201, (status, doc)
    return n, run_id, doc


def test_a_constraint_withdraws_the_pending_rollback_and_the_run_says_why():
    with TempDir() as d:
        n = node(d, "review")
        run_id = submit(n)
        approval = wait_for_approval(n, run_id)
        rollback = [s for s in n.steps(run_id) if s["tool"] == "deploy.rollback"]
        assert len(rollback) == 1 and rollback[0]["state"] == "intent", rollback
        code, out, err = sreh_cli(["say", run_id, "do not touch checkout, the release is being "
                                   "audited", "--server", f"127.0.0.1:{n.port}"], token=tok("otto"))
        assert code == 0 and "message 1" in out, (code, out, err)
        r = n.wait_run(run_id, timeout=60)
        status, _, doc = n.json("GET", f"/v1/approvals/{approval}", token=tok("otto"))
        a = doc.get("approval", doc)
        assert a["state"] == "withdrawn", a
        assert a["votes"][-1]["by"] == "otto" and "do not touch checkout" in a["votes"][-1]["comment"]
        # A second person's approve vote after it executes nothing.
        status, _, doc = n.json("POST", f"/v1/approvals/{approval}/decision",
                                {"decision": "approve", "comment": "go"}, token=tok("alice"))
        assert status == 409, (status, doc)
        steps = n.steps(run_id)
        rollbacks = [s for s in steps if s["tool"] == "deploy.rollback"]
        assert len(rollbacks) == 1 and rollbacks[0]["state"] == "failed", rollbacks
        assert "withdrawn" in rollbacks[0]["error"], rollbacks[0]
        assert all(s["state"] != "succeeded" or s["tool"] not in ("deploy.rollback", "service.restart")
                   for s in steps), steps
        [m] = message_steps(n, run_id)
        assert m["n"] == rollbacks[0]["n"] + 1, (m, rollbacks)  # taken at the next decision
        reading = m["result"] if isinstance(m["result"], dict) else json.loads(m["result"])
        assert reading["form"] == "constraint" and reading["entities"] == ["checkout"], m
        assert r["state"] == "succeeded", r
        assert "not mitigated" in r["conclusion"] and "constraint from otto" in r["conclusion"], r
        assert [c["entity"] for c in r["constraints"]] == ["checkout"], r["constraints"]
        [msg] = messages(n, run_id)
        assert msg["author"] == "otto" and msg["kind"] == "message" and msg["seq"] == 1, msg
        assert msg["taken_step"] == m["n"], (msg, m)
        code, out, err = sreh_cli(["show", run_id, "--server", f"127.0.0.1:{n.port}"],
                                  token=tok("vera"))
        assert code == 0 and "constraints" in out and "do not touch checkout" in out, out
        n.stop()


def test_a_message_while_the_run_investigates_keeps_the_rollback_from_being_proposed():
    with TempDir() as d:
        n, run_id, doc = said_mid_investigation(d, "Leave checkout alone.")
        r = n.wait_run(run_id, timeout=90)
        steps = n.steps(run_id)
        assert not [s for s in steps if s["tool"] == "deploy.rollback"], steps
        [m] = message_steps(n, run_id)
        assert m["n"] <= 5, m
        assert r["state"] == "succeeded" and "bad_deploy" in r["conclusion"], r
        assert "deploy.rollback on checkout not done" in r["conclusion"], r["conclusion"]
        n.stop()


def test_pause_holds_the_run_across_a_kill_until_resume_and_a_cancel_ends_a_paused_run():
    with TempDir() as d:
        n, run_id, doc = said_mid_investigation(d, "pause, the db is being failed over")
        wait_until(lambda: message_steps(n, run_id), 60, "the pause taken")
        [p] = message_steps(n, run_id)
        r = n.run(run_id)
        assert r["state"] == "running" and r["paused"]["step"] == p["n"], r
        assert r["paused"]["author"] == "otto", r
        status, _, doc = say(n, run_id, "what are you doing?")
        assert status == 201 and "The run is paused: otto said" in doc["reply"]["text"], doc
        # Paused across a crash: the restarted node reads the pause back from the journal.
        n.kill9()
        n.start()
        assert n.run(run_id)["paused"]["step"] == p["n"]
        code, out, err = sreh_cli(["show", run_id, "--server", f"127.0.0.1:{n.port}"],
                                  token=tok("otto"))
        assert code == 0 and f"paused by otto at step {p['n']}" in out, (code, out, err)
        status, _, doc = say(n, run_id, "resume")
        assert status == 201, (status, doc)
        r = n.wait_run(run_id, timeout=90)
        assert r["state"] == "succeeded" and r["paused"] is None, r
        steps = n.steps(run_id)
        # Nothing was decided while paused: the question's message and reply, then the resume,
        # right after the pause; then the run went on and mitigated.
        kinds = [(s["kind"], s["n"]) for s in steps if s["n"] > p["n"]][:3]
        assert kinds == [("message", p["n"] + 1), ("reply", p["n"] + 2),
                         ("message", p["n"] + 3)], kinds
        assert [s for s in steps if s["tool"] == "deploy.rollback" and s["state"] == "succeeded"]
        # A cancel ends a paused run at once.
        other = submit(n)
        wait_for_step(n, other, 2)
        assert say(n, other, "hold on")[0] == 201
        wait_until(lambda: message_steps(n, other), 60, "the second pause taken")
        status, _, doc = n.json("POST", f"/v1/runs/{other}/cancel", {}, token=tok("otto"))
        assert status in (200, 202), (status, doc)
        assert n.wait_run(other, timeout=30)["state"] == "cancelled"
        n.stop()


def described(steps):
    """The entities the run described, in order, each with its step."""
    out = []
    for s in steps:
        if s["kind"] == "tool" and s["tool"].endswith(".describe"):
            args = s["args"] if isinstance(s["args"], dict) else json.loads(s["args"])
            out.append((s["n"], next(iter(args.values()))))
    return out


def test_check_first_puts_that_entity_before_the_runs_own_checks():
    """Without a message the run walks frontend → checkout → its dependencies; "check cart-cache
    first" makes cart-cache the next thing it describes, says so in the decision, and the run
    still finds and mitigates the bad deploy."""
    with TempDir() as d:  # the run mitigates: the same world once more needs a node of its own
        n = node(d, "autonomous")
        baseline = submit(n)
        r = n.wait_run(baseline, timeout=90)
        assert r["state"] == "succeeded", r
        plain = [e for _, e in described(n.steps(baseline))]
        assert "cart-cache" in plain, plain  # the walk reaches it by itself, late
        n.stop()
    with TempDir() as d:
        n, steered, doc = said_mid_investigation(d, "Check cart-cache first, please.")
        r = n.wait_run(steered, timeout=90)
        steps = n.steps(steered)
        [m] = message_steps(n, steered)
        reading = m["result"] if isinstance(m["result"], dict) else json.loads(m["result"])
        assert reading["form"] == "check_first" and reading["entities"] == ["cart-cache"], reading
        order = described(steps)
        before = [e for k, e in order if k < m["n"]]
        after = [(k, e) for k, e in order if k > m["n"]]
        assert after and after[0][1] == "cart-cache", (m["n"], order)
        assert plain[len(before)] != "cart-cache", (plain, before)  # the order changed
        assert plain.index("cart-cache") > len(before), (plain, before)
        first = next(s for s in steps if s["n"] == after[0][0])
        assert f"asked at step {m['n']} to check cart-cache first" in first["decision"]["thought"], \
            first["decision"]
        assert [e for _, e in order].count("cart-cache") == 1, order  # not described again
        assert r["state"] == "succeeded" and "bad_deploy" in r["conclusion"], r
        assert any(s["tool"] == "deploy.rollback" and s["state"] == "succeeded" for s in steps)
        n.stop()


def test_a_message_committed_before_a_crash_is_taken_once_after_the_restart():
    with TempDir() as d:
        n = node(d, "autonomous", delay_ms=150, env_extra={"SREH_FAILPOINT": "after_message:1"})
        run_id = submit(n)
        wait_for_step(n, run_id, 2)
        try:
            say(n, run_id, "do not touch checkout")
        except Exception:  # noqa: BLE001 - the node dies under the request
            pass
        assert n.wait_exit(30) == -9, "the node did not stop at the failpoint"
        n.start(env_extra={"SREH_FAILPOINT": ""})
        r = n.wait_run(run_id, timeout=90)
        [m] = message_steps(n, run_id)
        [msg] = messages(n, run_id)
        assert msg["taken_step"] == m["n"] and msg["text"] == "do not touch checkout", (msg, m)
        assert not [s for s in n.steps(run_id) if s["tool"] == "deploy.rollback"]
        assert r["state"] == "succeeded" and "constraint from otto" in r["conclusion"], r
        # Another restart takes nothing twice.
        n.stop()
        n.start(env_extra={"SREH_FAILPOINT": ""})
        assert len(message_steps(n, run_id)) == 1
        n.stop()


def test_bad_messages_are_refused_and_a_flood_stops_at_the_limit():
    with TempDir() as d:
        n = node(d, "review")
        run_id = submit(n)
        approval = wait_for_approval(n, run_id)
        other = submit(n)  # parked too, then cancelled
        wait_for_approval(n, other)
        status, _, doc = n.json("POST", f"/v1/runs/{other}/cancel", {}, token=tok("otto"))
        assert status in (200, 202), (status, doc)
        assert n.wait_run(other, timeout=30)["state"] == "cancelled"
        unknown = "run_" + "0" * 26
        cases = [
            (unknown, {"text": "hello"}, "otto", 404, "no run"),
            ("run_nope", {"text": "hello"}, "otto", 400, "malformed"),
            (run_id, {"text": "hello"}, "vera", 403, ""),
            (run_id, {"text": "   "}, "otto", 400, "text"),
            (run_id, {"text": 7}, "otto", 400, "text"),
            (run_id, {"text": "x" * 9000}, "otto", 413, "8192"),
            (run_id, {"text": "hi", "colour": "red"}, "otto", 400, "colour"),
            (run_id, {}, "otto", 400, "text"),
        ]
        for rid, body, who, code, word in cases:
            status, _, doc = n.json("POST", f"/v1/runs/{rid}/messages", body, token=tok(who))
            assert status == code and word in doc.get("detail", ""), (rid, body, status, doc)
        status, _, data = n.request("POST", f"/v1/runs/{run_id}/messages", b"{not json",
                                    {"Content-Type": "application/json"}, token=tok("otto"))
        assert status == 400, (status, data)
        status, _, data = n.request("POST", f"/v1/runs/{run_id}/messages",
                                    b'{"text":"' + b"x" * (1024 * 1024) + b'"}',
                                    {"Content-Type": "application/json"}, token=tok("otto"))
        assert status == 413, (status, data[:200])
        assert messages(n, run_id) == []
        # The same Idempotency-Key twice: one message.
        status, _, first = say(n, run_id, "the pager fired at 09:12", key="note-1")
        assert status == 201, (status, first)
        status, _, again = say(n, run_id, "the pager fired at 09:12", key="note-1")
        assert status == 200 and again["message"]["id"] == first["message"]["id"], again
        # A flood: the run keeps 1000 messages, the rest are 429, none is lost.
        codes = {}
        for i in range(1005):
            status, _, doc = say(n, run_id, f"note {i}")
            codes[status] = codes.get(status, 0) + 1
            if status == 429:
                assert "1000 messages" in doc["detail"], doc
        assert codes == {201: 999, 429: 6}, codes
        listed = messages(n, run_id)
        assert len(listed) == 1000 and [m["seq"] for m in listed] == list(range(1, 1001))
        # The run is unharmed: approved, it rolls back and ends, having taken every message.
        status, _, doc = n.json("POST", f"/v1/approvals/{approval}/decision",
                                {"decision": "approve", "comment": "ok"}, token=tok("alice"))
        assert status == 200, (status, doc)
        r = n.wait_run(run_id, timeout=120)
        assert r["state"] == "succeeded", r
        assert len(message_steps(n, run_id)) == 1000
        assert all(m["taken_step"] for m in messages(n, run_id))
        # An ended run takes no message but a question, and this one has no room for one; a
        # cancelled run takes none.
        status, _, doc = say(n, run_id, "hello")
        assert status == 409 and "has ended" in doc["detail"], (status, doc)
        status, _, doc = say(n, run_id, "why checkout?")
        assert status == 429 and "1000 messages" in doc["detail"], (status, doc)
        status, _, doc = say(n, other, "hello")
        assert status == 409 and "cancelled" in doc["detail"], (status, doc)
        status, _, doc = say(n, other, "why did you stop?")
        assert status == 409 and "cancelled" in doc["detail"], (status, doc)
        assert messages(n, other) == []
        n.stop()


def cited(text):
    """Every step number a reply names ("step 3", "steps 3, 4 and 7"), in order, once."""
    out = []
    for m in re.finditer(r"\bsteps? (\d+(?:(?:, | and )\d+)*)", text):
        for k in re.findall(r"\d+", m.group(1)):
            if int(k) not in out:
                out.append(int(k))
    return out


def test_questions_are_answered_from_the_journal_citing_steps_that_exist():
    with TempDir() as d:
        n = node(d, "autonomous")
        run_id = submit(n)
        r = n.wait_run(run_id, timeout=60)
        assert r["state"] == "succeeded", r
        steps = {s["n"]: s for s in n.steps(run_id)}
        status, _, pm = n.json("GET", f"/v1/runs/{run_id}/postmortem", token=tok("vera"))
        assert status == 200, (status, pm)
        pm = pm.get("postmortem", pm)
        [cause] = [c for c in pm["root_cause"] if c["target"] == "checkout"]
        # Why this cause: the evidence chain, every cited step one that supports it.
        status, _, doc = say(n, run_id, "why checkout?", key="q-why")
        assert status == 201, (status, doc)
        q, a = doc["message"], doc["reply"]
        assert q["kind"] == "message" and q["seq"] == 1 and q["author"] == "otto", q
        assert a["kind"] == "reply" and a["author"] == "agent" and a["seq"] == 2, a
        assert "bad_deploy on checkout" in a["text"], a["text"]
        why = cited(a["text"])
        assert why and why == cause["evidence_steps"], (why, cause)
        for k in why:
            assert k in steps and steps[k]["kind"] == "tool" and steps[k]["state"] == "succeeded"
        # Asked again with the same key: the same question and answer, nothing new.
        status, _, again = say(n, run_id, "why checkout?", key="q-why")
        assert status == 200 and again["reply"]["id"] == a["id"], again
        # What it did and who allowed it: the rollback, by its step.
        status, _, doc = say(n, run_id, "what did you do?")
        assert status == 201, (status, doc)
        [rollback] = [s for s in steps.values() if s["tool"] == "deploy.rollback"]
        assert f"step {rollback['n']}: deploy.rollback" in doc["reply"]["text"], doc["reply"]
        assert "allowed by policy" in doc["reply"]["text"], doc["reply"]
        # What else: what it ruled out, each by a step the journal has.
        status, _, doc = say(n, run_id, "what else could it have been?")
        assert status == 201, (status, doc)
        assert all(k in steps for k in cited(doc["reply"]["text"])), doc["reply"]
        listed = messages(n, run_id)
        assert [(m["seq"], m["kind"]) for m in listed] == [
            (1, "message"), (2, "reply"), (3, "message"), (4, "reply"), (5, "message"),
            (6, "reply")], listed
        # The ended run's journal is closed: the conversation is in its messages only.
        assert len(n.steps(run_id)) == len(steps)
        code, out, err = sreh_cli(["say", run_id, "why checkout?", "--server",
                                   f"127.0.0.1:{n.port}"], token=tok("otto"))
        assert code == 0 and "bad_deploy on checkout" in out, (code, out, err)
        n.stop()


def test_a_question_to_a_working_run_is_answered_and_journaled_with_its_reply():
    with TempDir() as d:
        n, run_id, doc = said_mid_investigation(d, "what are you doing?")
        text = doc["reply"]["text"]
        assert "still working" in text and cited(text), text
        r = n.wait_run(run_id, timeout=90)
        assert r["state"] == "succeeded", r
        steps = n.steps(run_id)
        assert all(k <= len(steps) for k in cited(text)), text
        [q] = [s for s in steps if s["kind"] == "message"]
        [a] = [s for s in steps if s["kind"] == "reply"]
        assert a["n"] == q["n"] + 1, (q, a)
        result = a["result"] if isinstance(a["result"], dict) else json.loads(a["result"])
        assert result["in_reply_to"] == 1 and result["cites"] == cited(text), result
        assert [m["taken_step"] for m in messages(n, run_id)] == [q["n"], a["n"]]
        n.stop()


def hypothesis_facts(steps):
    """Every fact the run's decisions weighed for a hypothesis."""
    out = []
    for s in steps:
        detail = (s.get("decision") or {}).get("detail") or {}
        for h in detail.get("hypotheses", []) if isinstance(detail, dict) else []:
            out += [e["fact"] for e in h.get("evidence", [])]
    return out


def test_a_follow_up_starts_from_its_parents_conclusion_and_evidence():
    """The rollback is denied while the release is audited; once the audit is over, "roll it back
    now" as a follow-up starts from what the parent found: its context has the parent's
    conclusion, cause and evidence (steps that exist in the parent's journal), the builtin weighs
    the parent's cause first (it lists the deploys before walking the graph), and the rollback
    runs once approved. The parent is untouched; bad input changes nothing."""
    with TempDir() as d:
        n = node(d, "review")
        parent = submit(n)
        approval = wait_for_approval(n, parent)
        status, _, doc = n.json("POST", f"/v1/runs/{parent}/follow-up", {"goal": "now"},
                                token=tok("otto"))
        assert status == 409 and "still waiting" in doc["detail"], (status, doc)
        status, _, doc = n.json("POST", f"/v1/approvals/{approval}/decision",
                                {"decision": "deny", "comment": "the release is being audited"},
                                token=tok("alice"))
        assert status == 200, (status, doc)
        p = n.wait_run(parent, timeout=60)
        parent_steps = n.steps(parent)
        assert not [s for s in parent_steps if s["tool"] == "deploy.rollback"
                    and s["state"] == "succeeded"], parent_steps
        unknown = "run_" + "0" * 26
        for rid, body, who, code, word in [
                (unknown, {"goal": "again"}, "otto", 404, "not found"),
                ("run_nope", {"goal": "again"}, "otto", 400, "malformed"),
                (parent, {"goal": "again"}, "vera", 403, ""),
                (parent, {}, "otto", 400, "goal"),
                (parent, {"goal": 3}, "otto", 400, "goal"),
                (parent, {"goal": "again", "colour": "red"}, "otto", 400, "colour"),
                (parent, {"goal": "again", "labels": {"service": 1}}, "otto", 400, "labels")]:
            status, _, doc = n.json("POST", f"/v1/runs/{rid}/follow-up", body, token=tok(who))
            assert status == code and word in doc.get("detail", ""), (rid, body, status, doc)
        status, _, data = n.request("POST", f"/v1/runs/{parent}/follow-up", b"{not json",
                                    {"Content-Type": "application/json"}, token=tok("otto"))
        assert status == 400, (status, data)
        status, _, doc = n.json("GET", "/v1/runs", token=tok("vera"))
        assert [r["id"] for r in doc["runs"]] == [parent], doc  # none of it started a run
        goal = "the audit is over: roll checkout back now"
        code, out, err = sreh_cli(["follow-up", parent, goal, "--idempotency-key", "fu-1",
                                   "--server", f"127.0.0.1:{n.port}"], token=tok("otto"))
        assert code == 0, (code, out, err)
        [follow] = re.findall(r"run_[0-9A-Za-z]{26}", out)
        status, _, doc = n.json("POST", f"/v1/runs/{parent}/follow-up", {"goal": goal},
                                headers={"Idempotency-Key": "fu-1"}, token=tok("otto"))
        assert status == 200 and doc["run"]["id"] == follow, (status, doc)  # the same run
        f = n.run(follow)
        assert f["follow_up_of"] == parent and f["goal"] == goal, f
        assert f["labels"] == p["labels"], (f["labels"], p["labels"])  # the parent's, none given
        context = f["context"]
        assert context.startswith(f"Follow-up of run {parent} (succeeded)"), context
        assert "It concluded:" in context and "- bad_deploy on checkout" in context, context
        numbers = {s["n"] for s in parent_steps}
        evidence = [int(k) for k in re.findall(r"\n  - step (\d+):", context)]
        assert evidence and set(evidence) <= numbers, (evidence, numbers)
        approval = wait_for_approval(n, follow)
        facts = hypothesis_facts(n.steps(follow))
        assert f"run {parent}, which this run follows up, found bad_deploy" in facts, facts
        tools = [s["tool"] for s in n.steps(follow) if s["kind"] == "tool"]
        before = [s["tool"] for s in parent_steps if s["kind"] == "tool"]
        assert tools.index("deploys.list") < before.index("deploys.list"), (tools, before)
        status, _, doc = n.json("POST", f"/v1/approvals/{approval}/decision",
                                {"decision": "approve", "comment": "audit done"}, token=tok("alice"))
        assert status == 200, (status, doc)
        r = n.wait_run(follow, timeout=60)
        rollbacks = [s for s in n.steps(follow) if s["tool"] == "deploy.rollback"]
        assert r["state"] == "succeeded" and [s["state"] for s in rollbacks] == ["succeeded"], r
        assert n.steps(parent) == parent_steps and n.run(parent)["state"] == p["state"]
        code, out, err = sreh_cli(["show", follow, "--server", f"127.0.0.1:{n.port}"],
                                  token=tok("vera"))
        assert code == 0 and f"follows up: {parent}" in " ".join(out.split()), out
        n.stop()


if __name__ == "__main__":
    run_tests([
        test_a_constraint_withdraws_the_pending_rollback_and_the_run_says_why,
        test_a_message_while_the_run_investigates_keeps_the_rollback_from_being_proposed,
        test_check_first_puts_that_entity_before_the_runs_own_checks,
        test_a_message_committed_before_a_crash_is_taken_once_after_the_restart,
        test_bad_messages_are_refused_and_a_flood_stops_at_the_limit,
        test_questions_are_answered_from_the_journal_citing_steps_that_exist,
        test_a_question_to_a_working_run_is_answered_and_journaled_with_its_reply,
        test_a_follow_up_starts_from_its_parents_conclusion_and_evidence,
    ])
